// How far each thumbnail (bench/thumbs.ts) is from the full-resolution reference: the source decoded
// in full (no shrink-on-load) and resized with lanczos3 to the thumbnail's size by sharp, in a process
// without matte. Mean absolute difference of the RGB samples, 0..255.
import { join } from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { INPUTS, finish, workerArgs, type WorkerArgs } from '../common.js';

interface Args extends WorkerArgs {
  tasks: Array<{ input: string; outputs: string[] }>;
}

async function rgb(image: Sharp) {
  return image.removeAlpha().raw().toBuffer({ resolveWithObject: true });
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  sharp.cache(false);
  const results = [];
  for (const task of args.tasks) {
    const row = [];
    for (const file of task.outputs) {
      const out = await rgb(sharp(file));
      const { width, height } = out.info;
      const ref = await rgb(sharp(join(INPUTS, task.input)).resize(width, height, { fit: 'fill', kernel: 'lanczos3', fastShrinkOnLoad: false }));
      let sum = 0;
      for (let i = 0; i < out.data.length; i++) sum += Math.abs(out.data[i]! - ref.data[i]!);
      row.push({ width, height, mad: sum / out.data.length });
    }
    results.push(row);
  }
  finish(args, results);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
