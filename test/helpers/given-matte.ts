// A matte chosen by the test, handed to removeBackground through the matte cache (lib/matte-cache.ts:
// a hit replaces the model and the refinement), so that what comes after the cut-out (the
// staging, the foreground colours) is tested on a matte known exactly rather than on a model's.
import { encodeEntry } from '../../lib/matte-cache.js';
import type { MatteCache, MatteCacheOutcome } from '../../lib/index.js';

/** A cache holding `alpha` (one byte a pixel, width x height) under whatever key it is asked for. */
export function givenMatte(alpha: Uint8Array, width: number, height: number): MatteCache & { outcomes: MatteCacheOutcome[] } {
  const outcomes: MatteCacheOutcome[] = [];
  return {
    outcomes,
    get: (key) => encodeEntry(key, { data: Buffer.from(alpha), width, height }),
    put: () => undefined,
    report: (outcome) => void outcomes.push(outcome),
  };
}

/** A matte made pixel by pixel. */
export function matteOf(width: number, height: number, fn: (x: number, y: number) => number): Uint8Array {
  const alpha = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) alpha[y * width + x] = fn(x, y);
  return alpha;
}
