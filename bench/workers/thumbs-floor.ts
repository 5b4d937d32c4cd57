// The codec floor of each thumbnail task (bench/thumbs.ts), in a process of its own with the probes
// build: the source's decode at the DCT scale the request allows (the shrink-on-load rule of
// native/load.cc: the largest of 8, 4, 2 that leaves lanczos3 at least 1.25x, a side rounded up to
// a whole pixel counted unrounded) and the encode of the
// final image alone, through the same libjpeg-turbo and libwebp as the addon, CPU time.
import { probes } from '../../test/helpers/probes.js'; // first: lib/ then loads the probes build (codecFloor)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { INPUTS, finish, workerArgs, type WorkerArgs } from '../common.js';

interface Args extends WorkerArgs {
  tasks: Array<{ input: string; width: number; format: 'webp' | 'jpeg'; quality: number }>;
  runs?: number;
}

/** The JPEG's size from its SOF marker. */
function jpegSize(data: Buffer): { width: number; height: number } {
  for (let i = 2; i + 9 < data.length; ) {
    if (data[i] !== 0xff) throw new Error('not a JPEG');
    const marker = data[i + 1]!;
    const length = data.readUInt16BE(i + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: data.readUInt16BE(i + 5), width: data.readUInt16BE(i + 7) };
    }
    i += 2 + length;
  }
  throw new Error('no SOF marker');
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  const results = args.tasks.map((task) => {
    const jpeg = readFileSync(join(INPUTS, task.input));
    const { width, height } = jpegSize(jpeg);
    const outHeight = Math.max(1, Math.round((height * task.width) / width));
    const factor = Math.min(width / Math.max(1, task.width - 0.5), height / Math.max(1, outHeight - 0.5));
    const shrink = [8, 4, 2].find((s) => s * 1.25 <= factor) ?? 1;
    const floor = probes.codecFloor(jpeg, { shrink, width: task.width, height: outHeight, format: task.format, quality: task.quality, runs: args.runs ?? 9 });
    return { shrink, ...floor, totalMs: floor.decodeMs + floor.encodeMs };
  });
  finish(args, results);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
