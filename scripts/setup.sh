#!/bin/sh
# Installs whatever is missing, in order, and skips what is already done: the system libraries
# (libvips-dev, a compiler, cmake, patchelf), npm dependencies, the native build, the TypeScript build and
# the default model. `npm start` and `npm test` run it first, so a fresh clone needs nothing else.
set -e
cd "$(dirname "$0")/.."

say() { printf 'matte setup: %s\n' "$*"; }
# MATTE_PHASES (.ci/run): the steps that did something note their wall seconds there.
mark() { step_started=$(date +%s); }
took() { [ -z "${MATTE_PHASES:-}" ] || printf '%s\t%s\n' "$1" "$(( $(date +%s) - step_started ))" >>"$MATTE_PHASES"; }

# 1. System packages (Debian 12: libvips 8.14).
missing=""
pkg-config --exists 'vips-cpp >= 8.14' 2>/dev/null || missing="$missing libvips-dev"
# libheif for the AVIF encoder (native/encode/avif.cc); libvips-dev depends on it on Debian 12.
pkg-config --exists 'libheif >= 1.15' 2>/dev/null || missing="$missing libheif-dev"
pkg-config --exists zlib 2>/dev/null || missing="$missing zlib1g-dev"  # the PNG encoder (native/encode)
pkg-config --exists libdeflate 2>/dev/null || missing="$missing libdeflate-dev"  # the PNG encoder
pkg-config --exists libwebp libwebpmux 2>/dev/null || missing="$missing libwebp-dev"  # the WebP encoders
pkg-config --exists imagequant 2>/dev/null || missing="$missing libimagequant-dev"  # the GIF encoder
pkg-config --exists cgif 2>/dev/null || missing="$missing libcgif-dev"  # the GIF encoder
# ghostscript's standard ICC profiles, for the colour-profile tests (test/engine/colour-profiles).
[ -f /usr/share/color/icc/ghostscript/ps_cmyk.icc ] || missing="$missing libgs-common"
# heif-enc, for the HEIC inputs the tests and the fuzzer make (test/helpers/heic.ts): libheif's
# own x265 encoder (a small package: its libraries come with libvips-dev already).
command -v heif-enc >/dev/null 2>&1 || missing="$missing libheif-examples"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
command -v cmake >/dev/null 2>&1 || missing="$missing cmake"
command -v g++ >/dev/null 2>&1 || missing="$missing g++"
command -v make >/dev/null 2>&1 || missing="$missing make"
command -v patchelf >/dev/null 2>&1 || missing="$missing patchelf"
[ -z "$missing" ] || { mark; sh scripts/apt-install.sh "matte setup" $missing; took "set-up: system packages"; }

# 2. npm dependencies, when package-lock.json changed since the last install. onnxruntime-node (a
# test and bench reference) would download CUDA from outside the npm registry in its postinstall:
# ONNXRUNTIME_NODE_INSTALL=skip, which its install script reads, keeps that off (its CPU build ships
# inside the package). An npm config would too, but npm warns about any config it does not know.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm dependencies"
  mark
  ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error
  took "set-up: npm ci (its install script: the cmake-js build)"
  if [ -n "${MATTE_PHASES:-}" ] && [ -f build/Release/matte.node ] && [ build/Release/matte.node -nt package-lock.json ]; then
    printf '  %s\t%s\n' "of which build: cmake-js, matte.node" \
      "$(( $(stat -c %Y build/Release/matte.node) - $(stat -c %Y build/CMakeCache.txt) ))" >>"$MATTE_PHASES"
  fi
fi

# 3. The native addon (npm ci builds it through the install script; again when a source changed),
# and the probes build the tests and benches measure with (matte_probes.node, never packed).
for addon in build/Release/matte.node build/Release/matte_probes.node; do
  if [ ! -f "$addon" ] || [ -n "$(find native CMakeLists.txt package-lock.json -newer "$addon" -type f 2>/dev/null | head -n 1)" ]; then
    target=$(basename "$addon" .node)
    say "building the native addon ($target)"
    mark
    npx --no-install cmake-js compile --out build --target "$target" --log-level error
    touch "$addon"
    took "build: cmake-js, $target.node"
  fi
done

# 4. TypeScript, when a source is newer than the last build.
stamp=dist/.built
if [ ! -f "$stamp" ] || [ -n "$(find lib server cli models test bench tsconfig.json -name '*.ts' -newer "$stamp" -o -name tsconfig.json -newer "$stamp" 2>/dev/null | head -n 1)" ]; then
  say "compiling TypeScript"
  mark
  npx --no-install tsc -p tsconfig.json
  touch "$stamp"
  took "set-up: TypeScript"
fi

# 5. The default model (checked by sha256; nothing is downloaded when it is already there).
mark
node dist/models/fetch.js --quiet "${MATTE_MODEL:-u2netp}"

# 6. Debian's chromium for the browser tests (test/browser/), when missing.
sh scripts/setup-browser.sh
[ "$(( $(date +%s) - step_started ))" -lt 2 ] || took "set-up: the default model, chromium"
