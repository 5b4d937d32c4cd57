// The responsive-image variants of bench/ops.ts in one process, alternated run by run: every
// round times each variant once, starting from a different one each round.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configure, edit, loadModel } from '../../lib/index.js';
import { INPUTS, finish, summarise, workerArgs, type WorkerArgs } from '../common.js';
import type { OpsVariant } from '../ops.js';

interface Args extends WorkerArgs {
  input: string;
  variants: OpsVariant[];
  warmup: number;
  runs: number;
  threads: number;
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  configure({ concurrency: 1, threads: args.threads });
  const input = readFileSync(join(INPUTS, args.input));
  const model = await loadModel();
  // The matte cache a server keeps: a Map here.
  const entries = new Map<string, Uint8Array>();
  const matteCache = { get: (key: string) => entries.get(key), put: (key: string, entry: Uint8Array) => void entries.set(key, entry) };
  const run = async (operations: unknown[]) => {
    const start = process.hrtime.bigint();
    await edit(input, operations, { format: 'jpeg', quality: 80, matteCache });
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  const subject = args.variants.find((v) => v.operations.some((op) => JSON.stringify(op).includes('"subject"')));
  const subjectFirstMs = subject ? await run(subject.operations) : 0;
  for (let i = 0; i < 100 && subject && entries.size === 0; i++) await new Promise((r) => setTimeout(r, 10));
  for (let i = 0; i < args.warmup; i++) for (const v of args.variants) await run(v.operations);
  const times: Record<string, number[]> = Object.fromEntries(args.variants.map((v) => [v.name, []]));
  for (let round = 0; round < args.runs; round++) {
    for (let k = 0; k < args.variants.length; k++) {
      const v = args.variants[(round + k) % args.variants.length]!;
      times[v.name]!.push(await run(v.operations));
    }
  }
  finish(args, { timings: Object.fromEntries(Object.entries(times).map(([name, runs]) => [name, summarise(runs)])), subjectFirstMs, model: model.name });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
