# Sourced (not run) by scripts/test-asan.sh and .ci/run: the environment that runs Node against the
# ASan+UBSan build of the addon (build-asan, `cmake-js compile --CDMATTE_SANITIZE=ON`).
#
# - Node itself is not instrumented, so the ASan runtime is preloaded (it must be the first library
#   of the process); the UBSan runtime comes in as a dependency of the addon.
# - Leaks are not checked by LeakSanitizer here (detect_leaks=0), deliberately: over a whole Node
#   process it reports what Node never frees at exit (N-API externals V8 does not finalise, ONNX
#   Runtime's statics), its tracer crashed at exit in 2 of 11 native suites ("Tracer caught signal
#   11"), and it cannot see the leak that matters most here, a VipsImage kept alive by a missing
#   unref: libvips keeps every live object in a global table, so it stays reachable. Leaks are
#   checked by the fuzzer instead (libvips' live objects and tracked memory after every batch, RSS
#   over batches; test/fuzz/run.ts) and by the soak (bench/soak.ts).
# - Reports go to files in MATTE_SANITIZER_LOG_DIR as well as failing the process (halt_on_error,
#   and -fno-sanitize-recover for UB): scripts/run-tests.mjs fails a suite that left a report,
#   even one from a grandchild process (a spawned server) whose output a test did not show.
# - ASan keeps its SIGSEGV handler (allow_user_segv_handler=0): Node installs its own after ASan's
#   and re-raises a fault it does not own with the default action, so a SIGSEGV in uninstrumented
#   code (libvips, liborc, a decoder) killed a suite with no report and no stack (issue 11).
# - Allocation and free stacks are kept 5 frames deep (malloc_context_size, default 30): recording
#   every one of Node's own allocations 30 frames deep is a good part of what each process costs
#   under ASan, and a report's own stack (where the bad access happened) stays whole. For the full
#   allocation stack of a report, run the file again with ASAN_OPTIONS=...:malloc_context_size=30.
MATTE_ADDON_PATH="$(pwd)/build-asan/Release/matte.node"
MATTE_SANITIZER_LOG_DIR="${MATTE_SANITIZER_LOG_DIR:-$(mktemp -d -t matte-sanitizer-XXXXXX)}"
LD_PRELOAD="$(gcc -print-file-name=libasan.so)${LD_PRELOAD:+ $LD_PRELOAD}"
ASAN_OPTIONS="detect_leaks=0:malloc_context_size=5:halt_on_error=1:abort_on_error=0:handle_segv=1:allow_user_segv_handler=0:log_path=$MATTE_SANITIZER_LOG_DIR/asan"
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$MATTE_SANITIZER_LOG_DIR/ubsan"
export MATTE_ADDON_PATH MATTE_SANITIZER_LOG_DIR LD_PRELOAD ASAN_OPTIONS UBSAN_OPTIONS
