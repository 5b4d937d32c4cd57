#!/bin/sh
# podman as it runs on the development and CI machines (issue 37): podman 4.3 with runc (crun fails
# on their hybrid cgroups) and cgroupfs, a containers.conf that raises no rlimits (the sandbox may not
# raise them), and the file events backend (no journald). A test-only tool: .ci/run installs podman,
# runc and mmdebstrap; the image test and scripts/container-base.sh call podman through this.
# Usage: sh scripts/podman.sh ARGS...   (the same arguments as podman's)
set -e
conf="${XDG_CACHE_HOME:-$HOME/.cache}/matte/container/containers.conf"
if [ ! -f "$conf" ]; then
  mkdir -p "$(dirname "$conf")"
  printf '[containers]\ndefault_ulimits = []\n\n[engine]\nevents_logger = "file"\n' >"$conf.tmp"
  mv "$conf.tmp" "$conf"
fi
CONTAINERS_CONF="$conf" exec podman --runtime /usr/sbin/runc --cgroup-manager=cgroupfs "$@"
