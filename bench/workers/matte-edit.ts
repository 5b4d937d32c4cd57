// One edit pipeline with matte's lib/, in a process of its own (peak RSS is this pipeline's).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configure, edit, versions } from '../../lib/index.js';
import { INPUTS, OUTPUTS, finish, memory, time, workerArgs, type WorkerArgs } from '../common.js';
import { EXTENSIONS, PIPELINES } from '../pipelines.js';

interface Args extends WorkerArgs {
  pipeline: string;
  warmup: number;
  runs: number;
  threads: number;
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  const spec = PIPELINES.find((p) => p.id === args.pipeline);
  if (!spec) throw new Error(`unknown pipeline ${args.pipeline}`);
  // One job at a time, `threads` libvips threads for it (the same as sharp gets).
  configure({ concurrency: 1, threads: args.threads });
  const input = readFileSync(join(INPUTS, spec.input));
  const before = memory();
  let last: Awaited<ReturnType<typeof edit>> | undefined;
  const run = async () => {
    last = await edit(input, spec.operations, { format: spec.format, quality: spec.quality });
  };
  const timing = await time(run, args.warmup, args.runs);
  const output = join(OUTPUTS, `matte-${spec.id}.${EXTENSIONS[spec.format]}`);
  writeFileSync(output, last!.data);
  // Read before versions(), which opens ONNX Runtime (native/matte/onnxruntime.h): the peak is the
  // edits', not the version report's.
  const after = memory();
  finish(args, {
    tool: 'matte',
    pipeline: spec.id,
    versions: versions(),
    timing,
    output: { file: output, width: last!.width, height: last!.height, frames: last!.frames, bytes: last!.data.length },
    rssBeforeMB: before.rssMB,
    ...after,
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
