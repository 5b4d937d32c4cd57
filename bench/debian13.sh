#!/bin/sh
# Debian 13's libvips (8.16) against this Debian 12 host's (8.14), for the container image's choice
# (bench/README.md, "Debian 13's libvips"). Makes a Debian 13 root with mmdebstrap once (the build
# stage's packages, and the AVIF encoder plugin Debian 13 no longer pulls in), puts this host's Node
# and npm in it, clones this checkout's HEAD into it (commits only) and builds it there as the
# repository builds; then bench/debian13.ts alternates the library jobs between the two systems.
# Needs root (mmdebstrap, chroot, mounts), which are undone on exit.
# Usage: sh bench/debian13.sh [options of bench/debian13.ts, e.g. --rounds=5 --jobs=P1,T1]
#   DEBIAN13_ROOT: where the root is made and kept (default ~/.cache/matte/debian13).
set -e
cd "$(dirname "$0")/.."
root="${DEBIAN13_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/matte/debian13}"
say() { printf 'matte debian13: %s\n' "$*" >&2; }

sh scripts/setup.sh
node dist/bench/workers/inputs.js "{\"resultFile\":\"$(mktemp)\"}"

if [ ! -f "$root/etc/debian_version" ]; then
  command -v mmdebstrap >/dev/null || { echo "debian13: mmdebstrap is missing (apt-get install mmdebstrap)" >&2; exit 1; }
  say "building Debian 13 in $root with mmdebstrap"
  # Without recommends, as the image installs: libheif's AV1 encoder (AVIF) is only a recommendation
  # on Debian 13, so it is named.
  nice -n 10 mmdebstrap --quiet --variant=apt \
    --include=build-essential,cmake,pkg-config,python3,git,ca-certificates,patchelf,libvips-dev,libheif-dev,zlib1g-dev,libdeflate-dev,libwebp-dev,libimagequant-dev,libcgif-dev,libheif-plugin-aomenc \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    trixie "$root" \
    "deb http://deb.debian.org/debian trixie main" \
    "deb http://deb.debian.org/debian trixie-updates main" \
    "deb http://deb.debian.org/debian-security trixie-security main"
fi

# This host's Node (Debian 13's glibc is newer), npm, Node's headers for cmake-js, and the CA bundle
# Node is told to trust here (an npm registry behind a TLS proxy).
node_bin=$(readlink -f "$(command -v node)")
cp "$node_bin" "$root/usr/local/bin/node"
rm -rf "$root/usr/local/lib/node_modules/npm" "$root/usr/local/include/node"
mkdir -p "$root/usr/local/lib/node_modules" "$root/usr/local/include"
cp -r "$(npm root -g)/npm" "$root/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
cp -r "$(dirname "$(dirname "$node_bin")")/include/node" "$root/usr/local/include/node"
cp /etc/resolv.conf "$root/etc/resolv.conf"
ca=""
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ]; then
  cp "$NODE_EXTRA_CA_CERTS" "$root/usr/local/share/ca-certificates/host-extra.crt"
  ca="NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/host-extra.crt"
fi

mounted=""
unmount() { for dir in $mounted; do umount -R "$dir" 2>/dev/null || umount -lR "$dir"; done; }
trap unmount EXIT
trap 'exit 1' INT TERM
mount -t proc proc "$root/proc" && mounted="$root/proc"
for dir in sys dev; do
  mount --rbind "/$dir" "$root/$dir" && mount --make-rslave "$root/$dir" && mounted="$mounted $root/$dir"
done
inside() {
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 npm_config_nodedir=/usr/local $ca sh -c "cd /src && $*"
}

head=$(git rev-parse HEAD)
if [ "$(git -C "$root/src" rev-parse HEAD 2>/dev/null)" != "$head" ] || [ ! -f "$root/src/dist/.built" ]; then
  say "building $head in Debian 13"
  rm -rf "$root/src"
  git clone --quiet --no-local . "$root/src"
  # As scripts/setup.sh does: npm ci (its install script builds the addon with cmake-js), then tsc.
  inside "ONNXRUNTIME_NODE_INSTALL=skip nice -n 10 npm ci --no-audit --no-fund --loglevel=error >/dev/null"
  inside "nice -n 10 npx --no-install tsc -p tsconfig.json && touch dist/.built"
fi
mkdir -p "$root/src/bench/out/inputs"
cp -u bench/out/inputs/* "$root/src/bench/out/inputs/"

codecs="libvips42 libvips42t64 libjpeg62-turbo libwebp7 libspng0 libpng16-16 libpng16-16t64 libdeflate0 libtiff6 libheif1 libaom3 libdav1d6 libdav1d7 libhwy1 libhwy1t64 liborc-0.4-0 liborc-0.4-0t64 libimagequant0 libcgif0"
for side in host debian13; do
  run=""; [ "$side" = host ] || run="chroot $root"
  say "$side: $($run sh -c 'printf "%s" "$(cat /etc/debian_version)"'), libvips $($run pkg-config --modversion vips-cpp), gcc $($run gcc -dumpfullversion);" \
    "$($run dpkg-query -W -f '${Version}\t${Package}\n' $codecs 2>/dev/null | awk -F '\t' '$1 != "" { printf "%s %s, ", $2, $1 }')"
done
say "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), AVX-512 $(grep -q avx512f /proc/cpuinfo && echo yes || echo no)"
node dist/bench/debian13.js --root="$root" "$@"
