// run-tests: parallel
// The second pass on a small subject (native/matte/second_pass.h): with refine on, a subject that
// covers a small part of the frame gets a second inference on a crop around it; a subject that
// fills the frame, and refine: false, get the one inference of the whole frame.
// bench/quality measures what it gains on real photographs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadModel, removeBackground } from '../../lib/index.js';
import { addon } from '../../lib/native.js';
import { decode, disc, makePng, pixel, type Decoded } from '../helpers/images.js';

const counters = (addon as unknown as { counters: () => { inferencesPooled: number } }).counters;
const RED: [number, number, number] = [200, 30, 30];
const WHITE: [number, number, number] = [255, 255, 255];

// A disc of radius 50 centred at (400, 300) of a 1200x900 white frame: its box is under 2% of it.
const CX = 400, CY = 300, R = 50;
const inside = (x: number, y: number) => (x + 0.5 - CX) ** 2 + (y + 0.5 - CY) ** 2 <= R * R;
const small = makePng(1200, 900, (x, y) => (inside(x, y) ? RED : WHITE), { alpha: false });

test.before(async () => {
  await loadModel('u2netp');
});

async function counted(input: Buffer, refine: boolean): Promise<{ image: Decoded; inferences: number }> {
  const before = counters().inferencesPooled;
  const out = await removeBackground(input, { refine });
  return { image: await decode(out.data), inferences: counters().inferencesPooled - before };
}

test('a small subject: a second inference on its crop, and a matte that matches the subject', async () => {
  const { image, inferences } = await counted(small, true);
  assert.is(inferences, 2);
  // Away from the edge the matte is exact; across it, within a pixel or two of the true circle.
  let wrong = 0;
  for (let y = 0; y < image.height; y++)
    for (let x = 0; x < image.width; x++) {
      const d = Math.hypot(x + 0.5 - CX, y + 0.5 - CY) - R;
      const a = pixel(image, x, y)[3];
      if (d < -2 && a !== 255) wrong++;
      if (d > 2 && a !== 0) wrong++;
    }
  assert.is(wrong, 0, 'pixels more than 2 px from the edge with the wrong alpha');
});

test('a subject that fills the frame: one inference; refine: false: one inference', async () => {
  const full = await counted(disc(320, 240, 110, RED, WHITE, { alpha: false }), true);
  assert.is(full.inferences, 1);
  const plain = await counted(small, false);
  assert.is(plain.inferences, 1);
});

test('the same bytes every time (the crop, the model and the paste are deterministic)', async () => {
  const a = await removeBackground(small);
  const b = await removeBackground(small);
  assert.ok(a.data.equals(b.data));
});

test.run();
