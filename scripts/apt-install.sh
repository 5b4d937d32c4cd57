#!/bin/sh
# Installs Debian packages with apt-get when run as root; otherwise prints the command to run and
# fails. For the set-up scripts (setup.sh, setup-arm64.sh). Usage: apt-install.sh WHO PACKAGE...
set -e
who=$1
shift
if [ "$(id -u)" = 0 ]; then
  printf '%s: installing %s with apt-get\n' "$who" "$*"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
else
  printf '%s: missing system packages; run this, then try again:\n' "$who"
  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $*"
  exit 1
fi
