// matte's staged cut-out against its plain cut-out, on one photo with one model, refinement on (the
// default), in one process: `plain` is removeBackground -> PNG (the cut-out users composite
// themselves); `staged` is the same call with a shadow and a background image -> JPEG (opaque, what
// format auto gives), and `stagedPng` the same to PNG. Timed alternately, run by run, so a burst of
// load from elsewhere falls on all three. The plain cut-out is written for sharp-staged.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configure, loadModel, removeBackground, type RemoveBackgroundOptions, type ShadowValue } from '../../lib/index.js';
import { INPUTS, OUTPUTS, finish, memory, summarise, workerArgs, type WorkerArgs } from '../common.js';

interface Args extends WorkerArgs {
  model: string;
  input: string;
  background: string;
  shadow: ShadowValue;
  warmup: number;
  runs: number;
  threads: number;
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  configure({ concurrency: 1, threads: args.threads });
  await loadModel(args.model);
  const input = readFileSync(join(INPUTS, args.input));
  const backgroundImage = readFileSync(join(INPUTS, args.background));
  const variants: Record<string, RemoveBackgroundOptions> = {
    plain: { format: 'png' },
    staged: { format: 'jpeg', shadow: args.shadow, backgroundImage },
    stagedPng: { format: 'png', shadow: args.shadow, backgroundImage },
  };
  const names = Object.keys(variants);
  const runs: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const last: Record<string, Awaited<ReturnType<typeof removeBackground>>> = {};
  const once = async (name: string, into?: number[]) => {
    const start = process.hrtime.bigint();
    last[name] = await removeBackground(input, { ...variants[name], model: args.model, timeout: 0 });
    into?.push(Number(process.hrtime.bigint() - start) / 1e6);
  };
  const before = memory();
  for (let i = 0; i < args.warmup; i++) for (const name of names) await once(name);
  for (let i = 0; i < args.runs; i++) {
    // Each run in another order.
    const order = i % 2 === 0 ? names : [...names].reverse();
    for (const name of order) await once(name, runs[name]);
  }
  const after = memory();
  const stem = `${args.model}-${args.input.replace(/\.\w+$/, '')}`;
  const outputs: Record<string, { file: string; width: number; height: number; bytes: number }> = {};
  for (const name of names) {
    const r = last[name]!;
    const file = join(OUTPUTS, `matte-${name}-${stem}.${r.format}`);
    writeFileSync(file, r.data);
    outputs[name] = { file, width: r.width, height: r.height, bytes: r.data.length };
  }
  finish(args, {
    tool: 'matte',
    model: args.model,
    timing: Object.fromEntries(names.map((n) => [n, summarise(runs[n]!)])),
    outputs,
    rssBeforeMB: before.rssMB,
    ...after,
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
