// The second step of the two-step pipeline the staged cut-out replaces: matte's plain cut-out (a
// PNG, written by matte-staged.ts) composited by sharp, the way a sharp user would write it: the
// cut-out's alpha blurred into a black shadow at its offset, both over the background image
// covered to the cut-out's size, to JPEG q80. Same threads as matte's job, operation cache off.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { INPUTS, OUTPUTS, finish, memory, time, workerArgs, type WorkerArgs } from '../common.js';

interface Args extends WorkerArgs {
  cutout: string;
  background: string;
  /** matte's shadow in its terms: a blur radius (sigma = radius / 2), offsets, opacity. */
  shadow: { blur: number; offsetX: number; offsetY: number; opacity: number };
  warmup: number;
  runs: number;
  threads: number;
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  sharp.concurrency(args.threads);
  sharp.cache(false);
  const cutout = readFileSync(args.cutout);
  const background = readFileSync(join(INPUTS, args.background));
  const { blur, offsetX, offsetY, opacity } = args.shadow;
  const job = async () => {
    const { width, height } = await sharp(cutout).metadata();
    const raw = { width: width!, height: height! };
    const shadowAlpha = await sharp(cutout).extractChannel(3).blur(blur / 2).linear(opacity, 0).raw().toBuffer();
    const shadow = await sharp({ create: { ...raw, channels: 3, background: { r: 0, g: 0, b: 0 } } })
      .joinChannel(shadowAlpha, { raw: { ...raw, channels: 1 } })
      .raw()
      .toBuffer();
    return sharp(background)
      .resize(raw.width, raw.height, { fit: 'cover' })
      .composite([
        { input: shadow, raw: { ...raw, channels: 4 }, left: offsetX, top: offsetY },
        { input: cutout },
      ])
      .jpeg({ quality: 80 })
      .toBuffer({ resolveWithObject: true });
  };
  const before = memory();
  const timing = await time(job, args.warmup, args.runs);
  const after = memory();
  const { data, info } = await job();
  const file = join(OUTPUTS, `sharp-staged-${args.cutout.replace(/^.*\//, '').replace(/\.\w+$/, '')}.jpg`);
  writeFileSync(file, data);
  finish(args, { tool: 'sharp', versions: { sharp: sharp.versions.sharp, libvips: sharp.versions.vips }, timing, output: { file, width: info.width, height: info.height, bytes: data.length }, rssBeforeMB: before.rssMB, ...after });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
