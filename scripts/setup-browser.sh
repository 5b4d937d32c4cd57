#!/bin/sh
# Installs Debian's headless-capable `chromium` for the browser tests (test/browser/) when missing.
# Playwright's own browser download is not used: it needs a host other than the package registries.
# Run by scripts/setup.sh (so `npm test` and .ci/run get it); MATTE_SKIP_BROWSER=1 skips it.
set -e
[ "${MATTE_SKIP_BROWSER:-}" = 1 ] && exit 0
command -v chromium >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ]; then
  printf 'matte setup: installing chromium with apt-get (for the browser tests)\n'
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
else
  printf 'matte setup: chromium is missing (the browser tests will fail); run:\n  sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium\n'
fi
