// run-tests: parallel
// A removeBackground that is the job's first step on a large JPEG (or WebP) reads the model's input
// from a second, smaller decode (the decoder's own shrink) while the full image is decoded beside
// the model (native/matte/model_input.h, native/steps/remove_background.cc). The colours of the
// cut-out are the full decode's, exactly; the matte stays within rounding of the one made from the
// full decode (the model's input differs by the resampling only: about 0.4 of 255 on average).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { configure, edit, loadModel, removeBackground } from '../../lib/index.js';
import { convert, decode, makePng, withExifOrientation, type Decoded } from '../helpers/images.js';

// A soft-edged red subject on a textured light background, 1600x1200: the decoder shrinks it to
// 1/2 for u2netp's 320x320 (twice the model's size left on both sides).
const W = 1600;
const H = 1200;
const scene = makePng(W, H, (x, y) => {
  const d = Math.hypot(x - W * 0.45, y - H * 0.55) / (H * 0.3);
  const t = Math.min(1, Math.max(0, (d - 0.9) * 8)); // 0 inside the subject, 1 outside
  const texture = ((x * 7 + y * 13) % 23) - 11;
  return [Math.round(200 * (1 - t) + (225 + texture) * t), Math.round(40 * (1 - t) + (230 + texture) * t), Math.round(40 * (1 - t) + (235 + texture) * t)];
}, { alpha: false });
let jpeg: Buffer;
let decodedPng: Buffer; // the JPEG's own pixels as a PNG: no shrink-on-load, the full-decode path

test.before(async () => {
  configure({ concurrency: 1 });
  await loadModel('u2netp');
  jpeg = await convert(scene, 'jpeg', { quality: 92 });
  decodedPng = await convert(jpeg, 'png');
});

function compare(a: Decoded, b: Decoded): { rgbDifferent: number; alphaMean: number; alphaMax: number } {
  let rgbDifferent = 0, sum = 0, max = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    // Only where both are opaque: elsewhere a refined cut-out's colours are estimated from its matte.
    const opaque = a.data[i + 3] === 255 && b.data[i + 3] === 255;
    if (opaque && (a.data[i] !== b.data[i] || a.data[i + 1] !== b.data[i + 1] || a.data[i + 2] !== b.data[i + 2])) rgbDifferent++;
    const d = Math.abs(a.data[i + 3]! - b.data[i + 3]!);
    sum += d;
    max = Math.max(max, d);
  }
  return { rgbDifferent, alphaMean: sum / (a.data.length / 4), alphaMax: max };
}

for (const refine of [false, true]) {
  test(`a large JPEG (refine ${refine}): full-size cut-out, the JPEG's own colours, the matte within rounding of the full decode's`, async () => {
    const fromJpeg = await decode((await removeBackground(jpeg, { refine })).data);
    const fromFull = await decode((await removeBackground(decodedPng, { refine })).data);
    assert.is(fromJpeg.width, W);
    assert.is(fromJpeg.height, H);
    assert.ok(fromJpeg.hasAlpha);
    const diff = compare(fromJpeg, fromFull);
    assert.is(diff.rgbDifferent, 0, 'the cut-out colours are not the full decode');
    assert.ok(diff.alphaMean < 0.5, `alpha differs by ${diff.alphaMean.toFixed(3)} on average`);
    // Still a cut-out: subject opaque, background clear.
    const at = (x: number, y: number) => fromJpeg.data[(y * W + x) * 4 + 3]!;
    assert.ok(at(Math.round(W * 0.45), Math.round(H * 0.55)) > 200, 'the subject is not opaque');
    assert.ok(at(20, 20) < 30, 'the background is not transparent');
  });
}

test('EXIF orientation: the smaller decode is turned as the image is, the matte follows', async () => {
  const turned = withExifOrientation(jpeg, 6); // 90 degrees clockwise: 1200x1600 upright
  const fromJpeg = await decode((await removeBackground(turned, { refine: false })).data);
  const fromFull = await decode((await removeBackground(await convert(turned, 'png'), { refine: false })).data);
  assert.is(fromJpeg.width, H);
  assert.is(fromJpeg.height, W);
  const diff = compare(fromJpeg, fromFull);
  assert.is(diff.rgbDifferent, 0);
  assert.ok(diff.alphaMean < 0.5, `alpha differs by ${diff.alphaMean.toFixed(3)} on average`);
});

test('removeBackground after another step, and the same image small: the full-decode path, unchanged', async () => {
  // Not the first step: the model reads the image the steps made.
  const flipped = await decode((await edit(jpeg, [{ flip: 'h' }, { removeBackground: { refine: false } }], { format: 'png' })).data);
  assert.is(flipped.width, W);
  // Too small for the decoder to shrink: one decode, the same bytes as its PNG.
  const small = await convert(makePng(400, 300, (x, y) => (Math.hypot(x - 200, y - 150) < 80 ? [200, 40, 40] : [230, 230, 235]), { alpha: false }), 'jpeg');
  const a = await removeBackground(small, { refine: false });
  const b = await removeBackground(await convert(small, 'png'), { refine: false });
  assert.ok(a.data.equals(b.data));
});

test('a truncated large JPEG: unsupported_image, whichever decode meets the cut first', async () => {
  const truncated = jpeg.subarray(0, Math.floor(jpeg.length * 0.6));
  const err = await removeBackground(truncated).catch((e: { code?: string }) => e);
  assert.is((err as { code?: string }).code, 'unsupported_image');
});

test('a large JPEG stopped by its deadline or its signal: job_timeout / aborted, nothing else', async () => {
  const late = await removeBackground(jpeg, { timeout: 0.001 }).then(() => 'done', (e: { code?: string }) => e.code);
  assert.ok(late === 'job_timeout' || late === 'done', `unexpected ${late}`);
  const controller = new AbortController();
  const job = removeBackground(jpeg, { signal: controller.signal }).then(() => 'done', (e: { code?: string }) => e.code);
  setTimeout(() => controller.abort(), 10);
  const outcome = await job;
  assert.ok(outcome === 'aborted' || outcome === 'done', `unexpected ${outcome}`);
});

test.run();
