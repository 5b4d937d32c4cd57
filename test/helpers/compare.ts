// Distances between two images of the same size, as the colour and real-world suites report them:
// the mean and largest absolute difference of the colour samples, and the mean of each channel.
import { PNG } from 'pngjs';
import { edit, type Operation } from '../../lib/index.js';

export interface Rgba8 {
  width: number;
  height: number;
  /** RGBA, 4 bytes a pixel. */
  data: Buffer;
}

export interface Distance {
  /** Mean absolute difference of R, G and B (premultiplied), on the 0-255 scale. */
  mean: number;
  max: number;
  /** Mean absolute difference of alpha. */
  alpha: number;
}

/**
 * The colour is compared premultiplied by each image's alpha (what is seen over any background):
 * the colour of a fully transparent pixel is not part of the picture.
 */
export function distance(a: Rgba8, b: Rgba8): Distance {
  if (a.width !== b.width || a.height !== b.height) throw new Error(`sizes differ: ${a.width}x${a.height} and ${b.width}x${b.height}`);
  let sum = 0, max = 0, alpha = 0;
  for (let i = 0; i < a.data.length; i++) {
    const alphaAt = i - (i % 4) + 3;
    const d = i % 4 === 3 ? Math.abs(a.data[i]! - b.data[i]!) : Math.abs((a.data[i]! * a.data[alphaAt]!) / 255 - (b.data[i]! * b.data[alphaAt]!) / 255);
    if (i % 4 === 3) alpha += d;
    else {
      sum += d;
      if (d > max) max = d;
    }
  }
  const pixels = a.width * a.height;
  return { mean: sum / (pixels * 3), max, alpha: alpha / pixels };
}

/** Mean of each RGBA channel. */
export function means(image: Rgba8): number[] {
  const sums = [0, 0, 0, 0];
  for (let i = 0; i < image.data.length; i++) sums[i % 4]! += image.data[i]!;
  return sums.map((s) => s / (image.width * image.height));
}

/** matte's result of the operations as RGBA (first frame), through its PNG encoder and pngjs. */
export async function matteRgba(input: Buffer, operations: Operation[], options: { anim?: boolean } = {}): Promise<Rgba8> {
  const out = await edit(input, operations.length ? operations : [{ flip: 'h' }, { flip: 'h' }], { format: 'png', anim: options.anim ?? false });
  const png = PNG.sync.read(out.data);
  return { width: png.width, height: png.height, data: png.data };
}

export const show = (d: Distance) => `mean ${d.mean.toFixed(3)}, max ${d.max.toFixed(1)}, alpha ${d.alpha.toFixed(3)}`;
