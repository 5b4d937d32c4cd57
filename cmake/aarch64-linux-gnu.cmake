# Cross-compiles the addon for linux-arm64 (glibc) on an x64 Debian machine: Debian's
# g++-aarch64-linux-gnu against an arm64 sysroot holding libvips-dev and the rest of the build's
# libraries (scripts/setup-arm64.sh makes it; MATTE_ARM64_SYSROOT says where). Used by
# scripts/pack.mjs for @matte/linux-arm64-gnu: cmake-js compile --CDCMAKE_TOOLCHAIN_FILE=<this file>.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(NOT DEFINED ENV{MATTE_ARM64_SYSROOT} OR NOT IS_DIRECTORY "$ENV{MATTE_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu")
  message(FATAL_ERROR "MATTE_ARM64_SYSROOT must name an arm64 sysroot (sh scripts/setup-arm64.sh makes one)")
endif()
set(CMAKE_SYSROOT "$ENV{MATTE_ARM64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config reads the sysroot's .pc files only, and prefixes their paths with the sysroot.
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${CMAKE_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR} "${CMAKE_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${CMAKE_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
