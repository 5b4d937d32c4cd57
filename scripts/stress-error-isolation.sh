#!/usr/bin/env bash
# Hunts a crash seen once (issue 11): test/engine/error-isolation exited with SIGSEGV before its
# summary in CI's ASan pass, with no sanitizer report. Runs one test file again and again, each run
# in a directory of its own with core dumps on, and keeps the directory (output, sanitizer logs,
# core, gdb backtrace) of every run that did not end with a clean uvu summary.
#
#   scripts/stress-error-isolation.sh [asan|asan-ci|plain] [runs] [minutes] [test file]
#
# - asan: the ASan+UBSan build (scripts/asan-env.sh, where ASan keeps its own SIGSEGV handler:
#   allow_user_segv_handler=0, else Node's handler, installed after ASan's, re-raises a fault in
#   uninstrumented code, libvips or a decoder, with the default action and no report), aborting
#   with a core after the report (abort_on_error=1, disable_coredump=0).
# - asan-ci: CI's environment as it is (scripts/asan-env.sh), cores allowed.
# - plain: the normal build.
# Defaults: asan, 200 runs, 60 minutes, dist/test/engine/error-isolation.test.js. Runs under
# `nice -n 10` (the machine is shared). Prints `N runs, N failed` last; exits non-zero on a failure.
# Failed runs are kept in $MATTE_STRESS_DIR (default: a new directory under /tmp).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
mode=${1:-asan}
runs=${2:-200}
minutes=${3:-60}
file=${4:-dist/test/engine/error-isolation.test.js}
case "$file" in /*) ;; *) file="$root/$file" ;; esac
[ -f "$file" ] || { echo "no $file: build first (sh scripts/setup.sh)"; exit 2; }

case "$mode" in
  asan|asan-ci)
    [ -f build-asan/Release/matte.node ] || { echo "no build-asan: npm run build:asan"; exit 2; }
    . scripts/asan-env.sh
    if [ "$mode" = asan ]; then
      ASAN_OPTIONS="$ASAN_OPTIONS:handle_segv=1:allow_user_segv_handler=0:abort_on_error=1:disable_coredump=0"
    else
      ASAN_OPTIONS="$ASAN_OPTIONS:disable_coredump=0"
    fi
    export ASAN_OPTIONS
    # Only node gets the ASan runtime: under it, the loop's own tools (date, grep) would create
    # log_path's directory again after a clean run's was removed.
    preload=$LD_PRELOAD
    unset LD_PRELOAD ;;
  plain) preload=${LD_PRELOAD:-} ;;
  *) echo "mode must be asan, asan-ci or plain"; exit 2 ;;
esac

ulimit -c unlimited
out=${MATTE_STRESS_DIR:-$(mktemp -d -t matte-stress-XXXXXX)}
mkdir -p "$out"
echo "stress: $mode, up to $runs runs or $minutes min, $file; failures kept in $out"
end=$(( $(date +%s) + minutes * 60 ))
done_runs=0 failed=0
for i in $(seq 1 "$runs"); do
  [ "$(date +%s)" -lt "$end" ] || break
  dir="$out/run-$i"
  mkdir -p "$dir"
  if [ -n "${MATTE_SANITIZER_LOG_DIR:-}" ]; then
    MATTE_SANITIZER_LOG_DIR="$dir"
    ASAN_OPTIONS=$(printf '%s' "$ASAN_OPTIONS" | sed "s#log_path=[^:]*#log_path=$dir/asan#")
    UBSAN_OPTIONS=$(printf '%s' "$UBSAN_OPTIONS" | sed "s#log_path=[^:]*#log_path=$dir/ubsan#")
    export MATTE_SANITIZER_LOG_DIR ASAN_OPTIONS UBSAN_OPTIONS
  fi
  (cd "$dir" && MATTE_STRESS_RUN=$i FORCE_COLOR=0 ORT_DISABLE_TELEMETRY=1 LD_PRELOAD=$preload exec nice -n 10 node "$file") >"$dir/output" 2>&1
  status=$?
  done_runs=$i
  if [ "$status" -eq 0 ] && grep -q '^  Passed:' "$dir/output" && ! ls "$dir" | grep -Eq '^(asan|ubsan)|^core'; then
    rm -rf "$dir"
    continue
  fi
  failed=$((failed + 1))
  echo "run $i: exit $status (kept in $dir)"
  tail -n 5 "$dir/output"
  for core in "$dir"/core*; do
    [ -f "$core" ] || continue
    gdb -q -batch -ex 'info threads' -ex 'bt' -ex 'thread apply all bt 30' "$(command -v node)" "$core" >"$dir/backtrace.txt" 2>&1
    echo "  backtrace: $dir/backtrace.txt"
  done
done
echo "$done_runs runs, $failed failed"
[ "$failed" -eq 0 ]
