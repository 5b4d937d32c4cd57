// matte's removeBackground (png), end to end, for one model and one input, in its own process.
// Timed twice, alternating run by run: with `refine: false` (the model's matte alone: the same
// work as the JS pipeline, so its output is the one compared with it for parity) and with the
// refinement on (the library's and the server's default).
import { probes } from '../../test/helpers/probes.js'; // first: lib/ then loads the probes build (infer)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { configure, edit, loadModel, modelRegistry, removeBackground, type ModelEntry } from '../../lib/index.js';
import { INPUTS, OUTPUTS, finish, memory, summarise, time, workerArgs, type WorkerArgs } from '../common.js';

interface Args extends WorkerArgs {
  model: string;
  input: string;
  warmup: number;
  runs: number;
  threads: number;
  /** Also make the model-size image for js-matte's same-input control (default true). */
  control?: boolean;
  /** A model-size PNG: also time infer() (the probes build: the model alone, in matte's own ONNX Runtime) on it. */
  inferInput?: string;
  /** Also time the refined matte (default true). */
  refined?: boolean;
}

/** The normalised planar tensor that native/steps/remove_background.cc feeds the model. */
function planar(file: string, entry: ModelEntry): Float32Array {
  const png = PNG.sync.read(readFileSync(file));
  const pixels = png.width * png.height;
  let divide = entry.input.divide === 'max' ? 0 : entry.input.divide;
  if (!divide) {
    divide = 1;
    for (let i = 0; i < pixels * 4; i++) if (i % 4 !== 3 && png.data[i]! > divide) divide = png.data[i]!;
  }
  const chw = new Float32Array(pixels * 3);
  for (let c = 0; c < 3; c++) {
    const scale = 1 / (divide * entry.input.std[c]!);
    const offset = -entry.input.mean[c]! / entry.input.std[c]!;
    for (let i = 0; i < pixels; i++) chw[c * pixels + i] = png.data[i * 4 + c]! * scale + offset;
  }
  return chw;
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  configure({ concurrency: 1, threads: args.threads });
  const loadStart = process.hrtime.bigint();
  const model = await loadModel(args.model);
  const loadMs = Number(process.hrtime.bigint() - loadStart) / 1e6;
  const input = readFileSync(join(INPUTS, args.input));
  const before = memory();
  let last: Awaited<ReturnType<typeof removeBackground>> | undefined;
  const plainRuns: number[] = [];
  const refinedRuns: number[] = [];
  const once = async (refine: boolean, into?: number[]) => {
    const start = process.hrtime.bigint();
    const result = await removeBackground(input, { format: 'png', refine });
    into?.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (!refine) last = result;
  };
  const refined = args.refined !== false;
  for (let i = 0; i < args.warmup; i++) {
    await once(false);
    if (refined) await once(true);
  }
  for (let i = 0; i < args.runs; i++) {
    // Alternated, first one then the other, so that a burst of load falls on both.
    if (i % 2 === 0) {
      await once(false, plainRuns);
      if (refined) await once(true, refinedRuns);
    } else {
      if (refined) await once(true, refinedRuns);
      await once(false, plainRuns);
    }
  }
  const timing = summarise(plainRuns);
  const refinedTiming = refined ? summarise(refinedRuns) : undefined;
  // The model alone, in matte's own runtime (the probes build's infer()).
  let inference: Awaited<ReturnType<typeof time>> | undefined;
  if (args.inferInput) {
    const chw = planar(join(INPUTS, args.inferInput), model.entry);
    inference = await time(() => probes.infer(model.handle, chw), 1, Math.max(args.runs, 3));
  }
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
    refinedTiming,
    inference,
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
