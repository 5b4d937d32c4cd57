// run-tests: parallel
// Refinement and cleanup (docs/api.md, "Capacity and shutdown", background removal), on real images through the real addon and
// u2netp: the refined matte's edge follows the image's edge at full resolution, the background has
// no haze, trim crops to the visible subject; refine: false is the model alone; tta runs the model
// on the mirror too. bench/quality measures the quality on real photographs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, loadModel, removeBackground } from '../../lib/index.js';
import { decode, makePng, pixel, type Decoded } from '../helpers/images.js';

const RED: [number, number, number] = [200, 30, 30];
const WHITE: [number, number, number] = [255, 255, 255];

test.before(async () => {
  await loadModel('u2netp');
});

const alphaAt = (image: Decoded, x: number, y: number) => pixel(image, x, y)[3];

/** A 480x480 white image with one 100x100 subject (a red square) in its top-left corner. */
const cornerSubject = () => makePng(480, 480, (x, y) => (x >= 20 && x < 120 && y >= 20 && y < 120 ? RED : WHITE), { alpha: false });

function histogram(image: Decoded): number[] {
  const counts = new Array<number>(256).fill(0);
  for (let y = 0; y < image.height; y++) for (let x = 0; x < image.width; x++) counts[alphaAt(image, x, y)]!++;
  return counts;
}

test('trim on a white image with one 100x100 subject in a corner: about 100 px wide', async () => {
  const out = await removeBackground(cornerSubject(), { trim: true });
  assert.ok(out.width >= 95 && out.width <= 112, `width ${out.width}`);
  assert.ok(out.height >= 95 && out.height <= 112, `height ${out.height}`);
  // Without refinement (the model alone), the haze keeps the box near the whole canvas.
  const plain = await removeBackground(cornerSubject(), { trim: true, refine: false });
  assert.ok(plain.width > 300, `plain width ${plain.width}`);
});

test('cleanup: no faint haze over the background, an opaque subject has no holes', async () => {
  const refined = await decode((await removeBackground(cornerSubject())).data);
  const counts = histogram(refined);
  // The cleanup's floor and ceiling (native/matte/refine.h: 24 and 231, chosen by bench/quality).
  const faint = counts.slice(1, 25).reduce((a, b) => a + b, 0);
  assert.is(faint, 0, 'no alpha in 1..24');
  const nearlyOpaque = counts.slice(231, 255).reduce((a, b) => a + b, 0);
  assert.is(nearlyOpaque, 0, 'no alpha in 231..254');
  assert.is(alphaAt(refined, 400, 400), 0);
  for (const [x, y] of [[40, 40], [70, 70], [100, 100]] as const) assert.is(alphaAt(refined, x, y), 255, `${x},${y}`);
  // The model alone has that haze (the case of issue 10).
  const plain = histogram(await decode((await removeBackground(cornerSubject(), { refine: false })).data));
  assert.ok(plain.slice(1, 9).reduce((a, b) => a + b, 0) > 100, `the plain model leaves a haze: ${plain.slice(0, 9)}`);
});

test('at 2000x1500 the refined edge follows the image: a ramp of a few pixels at the true edge', async () => {
  // A disc of radius 500 centred at (1000, 750): along the middle row its edges are x = 500 and 1500.
  const input = makePng(2000, 1500, (x, y) => ((x + 0.5 - 1000) ** 2 + (y + 0.5 - 750) ** 2 <= 500 * 500 ? RED : WHITE), { alpha: false });
  const row = (image: Decoded) => Array.from({ length: image.width }, (_, x) => alphaAt(image, x, 750));
  const refined = row(await decode((await removeBackground(input)).data));
  const plain = row(await decode((await removeBackground(input, { refine: false })).data));
  const partial = (values: number[]) => values.filter((a) => a > 0 && a < 255).length;
  // The model's 320x320 matte upscaled ~6x ramps over tens of pixels; the refined one over a few.
  assert.ok(partial(plain) > 20, `plain: ${partial(plain)} partial pixels`);
  assert.ok(partial(refined) <= 8, `refined: ${partial(refined)} partial pixels`);
  // And where it crosses one half is the image's edge (within 2 px).
  const crossing = (values: number[], from: number, to: number) => {
    for (let x = from; x < to; x++) if ((values[x]! >= 128) !== (values[x + 1]! >= 128)) return x + 0.5;
    return -1;
  };
  assert.ok(Math.abs(crossing(refined, 400, 600) - 500) <= 2, `left edge at ${crossing(refined, 400, 600)}`);
  assert.ok(Math.abs(crossing(refined, 1400, 1600) - 1500) <= 2, `right edge at ${crossing(refined, 1400, 1600)}`);
});

test('refine: false is the model alone; refine inside the edit operation and its default', async () => {
  const input = cornerSubject();
  const plainLib = await removeBackground(input, { refine: false });
  const plainEdit = await edit(input, [{ removeBackground: { refine: false } }]);
  assert.ok(plainLib.data.equals(plainEdit.data), 'the same pixels through both paths');
  const defaultEdit = await edit(input, [{ removeBackground: true }]);
  const refinedEdit = await edit(input, [{ removeBackground: { refine: true } }]);
  assert.ok(defaultEdit.data.equals(refinedEdit.data), 'refine is on by default');
  assert.not.ok(defaultEdit.data.equals(plainEdit.data));
});

test('tta: the mean of the mattes of the image and its mirror; a symmetric subject barely changes', async () => {
  // A horizontally symmetric image: the mirror's matte is nearly the same (the network itself is
  // not exactly mirror-symmetric: its padding and strides), so tta changes little, at the edges.
  const symmetric = makePng(320, 240, (x, y) => (Math.abs(x + 0.5 - 160) < 60 && Math.abs(y + 0.5 - 120) < 60 ? RED : WHITE), { alpha: false });
  const a = await decode((await removeBackground(symmetric, { refine: false })).data);
  const b = await decode((await removeBackground(symmetric, { refine: false, tta: true })).data);
  let diff = 0, sum = 0, n = 0;
  for (let y = 0; y < 240; y += 3) {
    for (let x = 0; x < 320; x += 3) {
      const d = Math.abs(alphaAt(a, x, y) - alphaAt(b, x, y));
      diff = Math.max(diff, d);
      sum += d;
      n++;
    }
  }
  assert.ok(sum / n < 1, `mean difference ${sum / n}`);
  assert.ok(diff <= 40, `max difference ${diff}`);
  // On an asymmetric one it runs and still mattes the subject.
  const out = await decode((await edit(cornerSubject(), [{ removeBackground: { tta: true } }])).data);
  assert.is(alphaAt(out, 70, 70), 255);
  assert.is(alphaAt(out, 400, 400), 0);
});

test('bad settings: invalid_option / invalid_operations with their paths', async () => {
  const expectError = async (promise: Promise<unknown>, code: string, path: string) => {
    try {
      await promise;
      assert.unreachable('should have failed');
    } catch (err) {
      assert.is((err as { code: string }).code, code, String(err));
      assert.is((err as { path: string }).path, path, String(err));
    }
  };
  const input = cornerSubject();
  await expectError(removeBackground(input, { refine: 'yes' as unknown as boolean }), 'invalid_option', 'refine');
  await expectError(removeBackground(input, { model: '../etc/passwd' }), 'invalid_option', 'model');
  await expectError(edit(input, [{ removeBackground: { refine: 1 } }]), 'invalid_operations', 'operations[0].removeBackground');
  await expectError(edit(input, [{ removeBackground: { colour: true } }]), 'invalid_operations', 'operations[0].removeBackground');
  await expectError(edit(input, [{ removeBackground: false }]), 'invalid_operations', 'operations[0].removeBackground');
});

test.run();
