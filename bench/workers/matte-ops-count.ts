// One variant of bench/ops.ts run `runs` times after the same set-up as every other, for
// bench/ops-instructions.ts to count its instructions under callgrind. The set-up: the model
// loaded (no inference: ONNX Runtime's spinning threads would count), the subject's matte in the
// cache (made by the `seed` call, outside callgrind), one warm run. One libvips thread: how work is
// shared between threads changes what is computed twice at region edges, and so the count.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configure, edit, loadModel } from '../../lib/index.js';
import { INPUTS, finish, workerArgs, type WorkerArgs } from '../common.js';
import type { OpsVariant } from '../ops.js';

interface Args extends WorkerArgs {
  input: string;
  /** The subject's cache entries: written by `seed`, read by every counted run. */
  entries: string;
  seed?: boolean;
  variant: OpsVariant;
  runs: number;
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  configure({ concurrency: 1, threads: 1 });
  const input = readFileSync(join(INPUTS, args.input));
  await loadModel();
  const entries = new Map<string, Uint8Array>();
  const matteCache = { get: (key: string) => entries.get(key), put: (key: string, entry: Uint8Array) => void entries.set(key, entry) };
  const run = (operations: unknown[]) => edit(input, operations, { format: 'jpeg', quality: 80, matteCache });
  if (args.seed) {
    await run(args.variant.operations);
    for (let i = 0; i < 500 && entries.size === 0; i++) await new Promise((r) => setTimeout(r, 10));
    writeFileSync(args.entries, JSON.stringify([...entries].map(([key, entry]) => [key, Buffer.from(entry).toString('base64')])));
    finish(args, { entries: entries.size });
  }
  for (const [key, entry] of JSON.parse(readFileSync(args.entries, 'utf8')) as [string, string][]) entries.set(key, Buffer.from(entry, 'base64'));
  for (let i = 0; i <= args.runs; i++) await run(args.variant.operations);
  finish(args, {});
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
