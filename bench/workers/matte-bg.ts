// matte's removeBackground (png), end to end, for one model and one input, in its own process.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configure, edit, loadModel, modelRegistry, removeBackground } from '../../lib/index.js';
import { INPUTS, OUTPUTS, finish, memory, time, workerArgs, type WorkerArgs } from '../common.js';

interface Args extends WorkerArgs {
  model: string;
  input: string;
  warmup: number;
  runs: number;
  threads: number;
  /** Also make the model-size image for js-matte's same-input control (default true). */
  control?: boolean;
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  configure({ concurrency: 1, threads: args.threads });
  const loadStart = process.hrtime.bigint();
  await loadModel(args.model, { threads: args.threads });
  const loadMs = Number(process.hrtime.bigint() - loadStart) / 1e6;
  const input = readFileSync(join(INPUTS, args.input));
  const before = memory();
  let last: Awaited<ReturnType<typeof removeBackground>> | undefined;
  const timing = await time(async () => {
    last = await removeBackground(input, { format: 'png' });
  }, args.warmup, args.runs);
  const after = memory(); // before the control below, which is not part of the measurement
  const output = join(OUTPUTS, `matte-bg-${args.model}-${args.input.replace(/\.\w+$/, '')}.png`);
  writeFileSync(output, last!.data);
  // For a square input of a square model: matte's own model-size image (a contain resize to the
  // model size is the same Lanczos3 stretch removeBackground does), for js-matte's control.
  let controlInput: string | undefined;
  const { width: W, height: H } = (await modelRegistry()).models[args.model]!.input;
  if (args.control !== false && last!.width === last!.height && W === H) {
    const small = await edit(input, [{ resize: { width: W, height: H, fit: 'contain' } }], { format: 'png' });
    controlInput = join(OUTPUTS, `matte-model-input-${args.model}-${args.input.replace(/\.\w+$/, '')}.png`);
    writeFileSync(controlInput, small.data);
  }
  finish(args, {
    tool: 'matte',
    model: args.model,
    input: args.input,
    loadMs,
    timing,
    output: { file: output, width: last!.width, height: last!.height, bytes: last!.data.length },
    controlInput,
    rssBeforeMB: before.rssMB,
    ...after,
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
