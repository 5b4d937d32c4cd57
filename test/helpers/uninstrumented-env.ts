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
