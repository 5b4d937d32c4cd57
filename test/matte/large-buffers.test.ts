// run-tests: parallel
// Large images go through buffers of their own mapping, advised for huge pages (native/huge_pages.h):
// the refinement's copy of the image and the upscaled matte (at least 4 MB) and the PNG encoder's
// output (reserved at 32 MB and more, where glibc maps it apart). A real photograph (lenna.png)
// enlarged to 3300x2500 (25 MB of RGB, 33 MB of RGBA rows) crosses every one of those sizes. What
// must hold: the file is whole (every row), the colour is the input's to the
// byte, the matte is a real one (transparent, opaque and partial pixels, following the model's),
// and the same on every run and thread count (a buffer read before it was written would not be).
import { availableParallelism } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { configure, edit, loadModel, removeBackground } from '../../lib/index.js';
import { fixture } from '../helpers/fixtures.js';
import { decode, type Decoded } from '../helpers/images.js';

const W = 3300;
const H = 2500;
let photo: Buffer;
let input: Decoded;

test.before(async () => {
  configure();
  await loadModel('u2netp');
  const lenna = await fixture('lenna.png');
  photo = (await edit(lenna, [{ resize: { width: W, height: H, fit: 'cover' } }], { format: 'png' })).data;
  input = await decode(photo);
});

test.after(() => {
  configure();
});

async function cutOut(refine: boolean, threads = availableParallelism()): Promise<Decoded> {
  configure({ threads });
  const result = await removeBackground(photo, { refine });
  assert.is(result.width, W);
  assert.is(result.height, H);
  return decode(result.data);
}

function alphaOf(image: Decoded): Uint8Array {
  const alpha = new Uint8Array(image.width * image.height);
  for (let i = 0; i < alpha.length; i++) alpha[i] = image.data[i * 4 + 3]!;
  return alpha;
}

/** The input's colour at every pixel, or (refined: the partial and transparent ones carry estimated colours) at every opaque one. */
function assertColourIsTheInput(out: Decoded, opaqueOnly = false) {
  assert.is(out.width, W);
  assert.is(out.height, H);
  for (let i = 0; i < W * H; i++) {
    if (opaqueOnly && out.data[i * 4 + 3] !== 255) continue;
    for (let c = 0; c < 3; c++) {
      if (out.data[i * 4 + c] !== input.data[i * 4 + c]) {
        assert.unreachable(`pixel ${i % W},${Math.floor(i / W)} band ${c}: ${out.data[i * 4 + c]} against ${input.data[i * 4 + c]}`);
      }
    }
  }
}

function assertRealMatte(alpha: Uint8Array) {
  const seen = new Set(alpha);
  assert.ok(seen.has(0) && seen.has(255), 'both transparent and opaque pixels');
  assert.ok(seen.size > 20, `${seen.size} distinct alpha values`);
  // The last rows were written too (lenna's bottom edge is the subject's shoulder, not empty).
  let lastRows = 0;
  for (let i = (H - 8) * W; i < H * W; i++) lastRows += alpha[i]!;
  assert.ok(lastRows > 0, 'the last rows of the matte are empty');
}

test('the upscaled matte (refine: false) of a 3300x2500 photograph: whole, the input colour, the same on every run', async () => {
  const first = await cutOut(false);
  assertColourIsTheInput(first);
  const alpha = alphaOf(first);
  assertRealMatte(alpha);
  const again = alphaOf(await cutOut(false, 1));
  assert.ok(Buffer.compare(Buffer.from(alpha), Buffer.from(again)) === 0, 'the mattes of two runs differ');
});

test('the refined matte of a 3300x2500 photograph: whole, the input colour where opaque, near the plain one, the same on every run', async () => {
  const refined = await cutOut(true);
  assertColourIsTheInput(refined, true);
  const alpha = alphaOf(refined);
  assertRealMatte(alpha);
  // The refinement moves the matte along the outline and cleans near-0 and near-255 values: it stays
  // near the model's (5.3 / 255 here, the same before the buffers changed).
  const plain = alphaOf(await cutOut(false));
  let sum = 0;
  for (let i = 0; i < alpha.length; i++) sum += Math.abs(alpha[i]! - plain[i]!);
  const mean = sum / alpha.length;
  assert.ok(mean < 8, `mean difference from the plain matte ${mean.toFixed(2)} / 255`);
  const again = alphaOf(await cutOut(true, 1));
  assert.ok(Buffer.compare(Buffer.from(alpha), Buffer.from(again)) === 0, 'the mattes of two runs differ');
});

test.run();
