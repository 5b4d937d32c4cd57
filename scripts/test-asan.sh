#!/bin/sh
# npm run test:asan [-- filter...]: builds the addon with AddressSanitizer + UndefinedBehaviorSanitizer
# into build-asan (when a native source is newer) and runs the test suite against it. Any
# sanitizer report fails the suite it came from (scripts/run-tests.mjs).
set -e
cd "$(dirname "$0")/.."
sh scripts/setup.sh
for addon in build-asan/Release/matte.node build-asan/Release/matte_probes.node; do
  if [ ! -f "$addon" ] || [ -n "$(find native CMakeLists.txt package-lock.json -newer "$addon" -type f 2>/dev/null | head -n 1)" ]; then
    target=$(basename "$addon" .node)
    echo "matte: building the ASan+UBSan addon (build-asan, $target)"
    npx --no-install cmake-js compile --out build-asan --target "$target" --CDMATTE_SANITIZE=ON --log-level error
    touch "$addon"
  fi
done
. scripts/asan-env.sh
exec node scripts/run-tests.mjs "$@"
