// The environment for a child program that is not matte (a C reference program, a browser, a Node
// child that runs sharp or onnxruntime-node and never loads the addon) under `npm run test:asan`:
// scripts/asan-env.sh preloads the ASan runtime for Node and the addon, and an uninstrumented
// program with it preloaded hangs (libvips' reference programs), never starts (chromium) or runs
// a few times slower with nothing of matte's for ASan to check. Outside test:asan this is
// process.env in effect.
export function uninstrumentedEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && entry[0] !== 'LD_PRELOAD' && entry[0] !== 'ASAN_OPTIONS',
    ),
  );
}

// The other way round: a matte child started with an environment of its own (a server given only
// PATH, HOME and its settings) still gets what the test run instruments matte with: under
// test:asan the ASan runtime, its options, the sanitizer build (MATTE_ADDON_PATH) and the report
// directory; in the normal pass the preload that records which files load the addon. Without them
// the ASan pass ran such servers on the plain build and checked nothing in them.
const INSTRUMENTATION = ['LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS', 'MATTE_ADDON_PATH', 'MATTE_SANITIZER_LOG_DIR', 'NODE_OPTIONS', 'MATTE_TEST_ADDON_RECORD'];

export function instrumentationEnv(): Record<string, string> {
  return Object.fromEntries(INSTRUMENTATION.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]!]])));
}
