#!/bin/sh
# npm run test:asan [-- filter...]: builds the addon with AddressSanitizer + UndefinedBehaviorSanitizer
# into build-asan (when a native source is newer) and runs the test suite against it. Any
# sanitizer report fails the suite it came from (scripts/run-tests.mjs).
set -e
cd "$(dirname "$0")/.."
sh scripts/setup.sh
addon=build-asan/Release/matte.node
if [ ! -f "$addon" ] || [ -n "$(find native CMakeLists.txt package-lock.json -newer "$addon" -type f 2>/dev/null | head -n 1)" ]; then
  echo "matte: building the ASan+UBSan addon (build-asan)"
  npx --no-install cmake-js compile --out build-asan --CDMATTE_SANITIZE=ON --log-level error
  touch "$addon"
fi
. scripts/asan-env.sh
exec node scripts/run-tests.mjs "$@"
