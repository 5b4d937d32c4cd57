#!/usr/bin/env node
// The `matte` command (package.json "bin"). This file only sizes libuv's thread pool and hands over
// to the program: the pool's size is read when it first starts, so it is set here, before any
// module that may touch files is loaded (hence the dynamic import). Each running job holds one pool
// thread (the addon's AsyncWorker) and reading inputs needs the pool too. `matte serve` sizes it
// itself from its configuration (server/main.ts), so it is left alone there.
import { availableParallelism } from 'node:os';

if (process.argv[2] !== 'serve' && process.env.UV_THREADPOOL_SIZE === undefined) {
  process.env.UV_THREADPOOL_SIZE = String(Math.max(4, availableParallelism() + 2));
}

// `matte --help | head`: a reader that went away is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

const { main } = await import('./program.js');
process.exitCode = await main(process.argv);
