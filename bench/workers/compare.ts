// Compares pairs of encoded images with sharp (decoded here, in a process without matte):
// dimensions, frames, and the mean absolute difference per channel value (0..255) of the first
// frame, over all bands or over the alpha band only.
import sharp from 'sharp';
import { finish, workerArgs, type WorkerArgs } from '../common.js';

interface Pair {
  name: string;
  a: string;
  b: string;
  /** 'alpha': compare the alpha bands only (mattes; a 1-band image is a matte itself); 'rgb': the colour bands flattened on white. */
  mode: 'alpha' | 'rgb';
}

interface Args extends WorkerArgs {
  pairs: Pair[];
}

async function decode(file: string, mode: Pair['mode']) {
  const meta = await sharp(file, { animated: true }).metadata();
  let image = sharp(file); // first frame
  if (mode === 'alpha') image = meta.channels === 1 ? image.extractChannel(0) : image.ensureAlpha().extractChannel(3);
  else image = image.flatten({ background: '#ffffff' }).removeAlpha();
  const { data, info } = await image.raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, frames: meta.pages ?? 1 };
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  const results = [];
  for (const pair of args.pairs) {
    try {
      const [a, b] = await Promise.all([decode(pair.a, pair.mode), decode(pair.b, pair.mode)]);
      const sameSize = a.width === b.width && a.height === b.height && a.frames === b.frames;
      let mad: number | null = null;
      let maxDiff: number | null = null;
      if (a.width === b.width && a.height === b.height && a.data.length === b.data.length) {
        let sum = 0;
        let max = 0;
        for (let i = 0; i < a.data.length; i++) {
          const d = Math.abs(a.data[i]! - b.data[i]!);
          sum += d;
          if (d > max) max = d;
        }
        mad = sum / a.data.length;
        maxDiff = max;
      }
      results.push({ name: pair.name, sameSize, a: { width: a.width, height: a.height, frames: a.frames }, b: { width: b.width, height: b.height, frames: b.frames }, mad, maxDiff });
    } catch (err) {
      results.push({ name: pair.name, error: String(err) });
    }
  }
  finish(args, results);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
