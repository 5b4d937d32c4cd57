// Measures of a decoded image's alpha, for the staging tests: the box of alpha > 0, and the mass
// (sum of alpha) and its centre over a region.
import type { Decoded } from './images.js';

export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** The box of the pixels whose alpha passes `above` (default 0), or undefined. */
export function alphaBox(image: Decoded, above = 0): Box | undefined {
  let x0 = Infinity, y0 = Infinity, x1 = -1, y1 = -1;
  for (let y = 0; y < image.height; y++)
    for (let x = 0; x < image.width; x++)
      if (image.data[(y * image.width + x) * 4 + 3]! > above) {
        x0 = Math.min(x0, x);
        y0 = Math.min(y0, y);
        x1 = Math.max(x1, x);
        y1 = Math.max(y1, y);
      }
  return x1 < 0 ? undefined : { left: x0, top: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

/** The sum of alpha (0..255) over the pixels `where` accepts, and its centre (pixel centres). */
export function alphaMass(image: Decoded, where: (x: number, y: number) => boolean = () => true): { mass: number; x: number; y: number } {
  let mass = 0, sx = 0, sy = 0;
  for (let y = 0; y < image.height; y++)
    for (let x = 0; x < image.width; x++) {
      if (!where(x, y)) continue;
      const a = image.data[(y * image.width + x) * 4 + 3]!;
      mass += a;
      sx += a * (x + 0.5);
      sy += a * (y + 0.5);
    }
  return { mass, x: sx / mass, y: sy / mass };
}
