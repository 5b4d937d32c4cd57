// The bulk bench's baseline: removeBackground on the same images held in memory, `jobs` at once
// (configure({concurrency: jobs}), as `matte remove-background --jobs N` does), after a warm-up.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configure, loadModel, removeBackground } from '../../lib/index.js';
import { INPUTS, finish, memory, workerArgs, type WorkerArgs } from '../common.js';

interface Args extends WorkerArgs {
  model: string;
  files: string[];
  jobs: number;
  warmup: number;
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  configure({ concurrency: args.jobs });
  await loadModel(args.model);
  const images = args.files.map((file) => readFileSync(join(INPUTS, file)));
  for (let i = 0; i < args.warmup; i++) await removeBackground(images[i % images.length]!, { format: 'png' });
  let next = 0;
  const start = process.hrtime.bigint();
  const lane = async () => {
    while (next < images.length) await removeBackground(images[next++]!, { format: 'png' });
  };
  await Promise.all(Array.from({ length: args.jobs }, lane));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  finish(args, { images: images.length, seconds, perSecond: images.length / seconds, ...memory() });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
