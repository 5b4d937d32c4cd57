// run-tests: parallel
// The refined cut-out's colours (native/matte/foreground.h): where alpha is partial, the subject's
// own colour, not the input's mix of subject and old background; where alpha is 0, a colour of
// the subject nearby, never the old background's. A two-colour composite with an exact truth
// (a flat subject colour over a flat background, anti-aliased edge, I = aF + (1 - a)B) through
// the real addon and u2netp.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadModel, removeBackground } from '../../lib/index.js';
import { decode, makePng, type Decoded } from '../helpers/images.js';

const W = 800, H = 600;
const SUBJECT = [30, 110, 120] as const, BACKGROUND = [225, 200, 160] as const;
const inside = (x: number, y: number) =>
  ((x - 380) / 215) ** 2 + ((y - 350) / 165) ** 2 <= 1 || (x >= 525 && x <= 625 && y >= 120 && y <= 350);

let input: Buffer;

test.before(async () => {
  await loadModel('u2netp');
  const alpha = new Uint8Array(W * H);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      let n = 0;
      for (let j = 0; j < 4; j++) for (let i = 0; i < 4; i++) n += inside(x + (i + 0.5) / 4, y + (j + 0.5) / 4) ? 1 : 0;
      alpha[y * W + x] = Math.round((n / 16) * 255);
    }
  input = makePng(W, H, (x, y) => {
    const a = alpha[y * W + x]! / 255;
    return [0, 1, 2].map((c) => Math.round(a * SUBJECT[c]! + (1 - a) * BACKGROUND[c]!)) as [number, number, number];
  }, { alpha: false });
});

/** The largest difference of a pixel's colour from the subject's, per pixel of the given alpha. */
function deviations(image: Decoded, which: (alpha: number) => boolean): number[] {
  const out: number[] = [];
  for (let i = 0; i < image.width * image.height; i++) {
    if (!which(image.data[i * 4 + 3]!)) continue;
    out.push(Math.max(...[0, 1, 2].map((c) => Math.abs(image.data[i * 4 + c]! - SUBJECT[c]!))));
  }
  return out.sort((a, b) => a - b);
}

test('edge pixels carry the true subject colour, not the mix with the old background', async () => {
  const refined = await decode((await removeBackground(input)).data);
  const partial = deviations(refined, (a) => a > 0 && a < 255);
  assert.ok(partial.length > 200, `${partial.length} partial pixels`);
  const mean = partial.reduce((s, d) => s + d, 0) / partial.length;
  const p95 = partial[Math.floor(partial.length * 0.95)]!;
  assert.ok(mean <= 5, `mean deviation from the subject colour ${mean.toFixed(2)}`);
  assert.ok(p95 <= 12, `95th percentile deviation ${p95}`);
  // The plain model keeps the input's colours: the old background shows in its edge.
  const plain = await decode((await removeBackground(input, { refine: false })).data);
  const plainPartial = deviations(plain, (a) => a > 0 && a < 255);
  assert.ok(plainPartial[Math.floor(plainPartial.length / 2)]! > 40, 'the plain edge is not a mix (the test image is wrong)');
});

test('transparent pixels next to the subject carry its colour, not the old background', async () => {
  const refined = await decode((await removeBackground(input)).data);
  // Those within 3 px of a pixel with alpha > 0: what a viewer resizing without premultiplied alpha
  // mixes into the edge.
  const near = new Uint8Array(W * H);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++)
      if (refined.data[(y * W + x) * 4 + 3]! > 0)
        for (let dy = -3; dy <= 3; dy++)
          for (let dx = -3; dx <= 3; dx++) {
            const xx = x + dx, yy = y + dy;
            if (xx >= 0 && xx < W && yy >= 0 && yy < H) near[yy * W + xx] = 1;
          }
  const out: number[] = [];
  for (let i = 0; i < W * H; i++) {
    if (!near[i] || refined.data[i * 4 + 3] !== 0) continue;
    out.push(Math.max(...[0, 1, 2].map((c) => Math.abs(refined.data[i * 4 + c]! - SUBJECT[c]!))));
  }
  out.sort((a, b) => a - b);
  assert.ok(out.length > 1000, `${out.length} transparent pixels next to the subject`);
  assert.ok(out[out.length - 1]! <= 12, `largest deviation ${out[out.length - 1]}`);
  const all = deviations(refined, (a) => a === 0);
  assert.ok(all[Math.floor(all.length / 2)]! <= 6, `median deviation of every transparent pixel ${all[Math.floor(all.length / 2)]}`);
});

test.run();
