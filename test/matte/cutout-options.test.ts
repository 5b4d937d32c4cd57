// run-tests: parallel
// removeBackground's `channels` and `trimMargin` through the library and the real addon with a
// small model (test/helpers/onnx.ts: the matte is the pixel's brightness, so a white disc on black
// is the subject, exactly; u2netp's own cut-outs are effect.test's): the mask is one band and is
// the cut-out's alpha; a margin gives the exact size, past the image's edge with transparent
// pixels; bad values are invalid_option with their path.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadModel, removeBackground, MatteError } from '../../lib/index.js';
import { decode, disc, formatOf } from '../helpers/images.js';
import { brightnessModel } from '../helpers/onnx.js';
import { scratchDir } from '../helpers/scratch.js';

const WHITE = [255, 255, 255] as const, BLACK = [0, 0, 0] as const;
const input = disc(320, 240, 70, [...WHITE], [...BLACK], { alpha: false });
// A subject near the top-left corner: a margin passes the image's edge.
const corner = disc(200, 160, 40, [...WHITE], [...BLACK], { alpha: false });

let dir = '';
scratchDir(test, 'matte-cutout-options-', (path) => (dir = path));

test.before(async () => {
  const model = await brightnessModel(dir, 'brightness', 64);
  await loadModel('brightness', { entry: model, path: model.path });
});

const pngColourType = (png: Buffer) => png[25];

test('channels alpha: a single-band greyscale PNG equal to the cut-out alpha', async () => {
  // refine on and off: the plain model's upscaled matte has partial values everywhere at its edge.
  for (const refine of [true, false]) {
    const cutout = await decode((await removeBackground(input, { refine })).data);
    const mask = await removeBackground(input, { channels: 'alpha', refine });
    assert.is(formatOf(mask.data), 'png');
    assert.is(pngColourType(mask.data), 0, 'PNG colour type 0 (greyscale, no alpha)');
    assert.is(mask.data[24], 8, 'bit depth 8');
    const grey = await decode(mask.data);
    assert.is(grey.width, cutout.width);
    assert.is(grey.height, cutout.height);
    const seen = new Set<number>();
    let differ = 0;
    for (let i = 0; i < grey.width * grey.height; i++) {
      const a = cutout.data[i * 4 + 3]!;
      if (grey.data[i * 4] !== a) differ++;
      seen.add(a);
    }
    assert.is(differ, 0, 'mask pixels differ from the cut-out alpha');
    assert.ok(seen.has(0) && seen.has(255) && (refine || seen.size > 20), `${seen.size} alpha values`);
  }
  // With trim, the same box.
  const trimmed = await removeBackground(input, { trim: true });
  const trimmedMask = await removeBackground(input, { trim: true, channels: 'alpha' });
  assert.is(trimmedMask.width, trimmed.width);
  assert.is(trimmedMask.height, trimmed.height);
});

test('channels alpha in webp: an opaque grey image whose grey is the alpha, within lossy rounding', async () => {
  const cutout = await decode((await removeBackground(input)).data);
  const mask = await removeBackground(input, { channels: 'alpha', format: 'webp' });
  assert.is(formatOf(mask.data), 'webp');
  const grey = await decode(mask.data);
  let sum = 0;
  for (let i = 0; i < grey.width * grey.height; i++) {
    assert.is(grey.data[i * 4 + 3], 255);
    sum += Math.abs(grey.data[i * 4]! - cutout.data[i * 4 + 3]!);
  }
  assert.ok(sum / (grey.width * grey.height) < 3, `mean difference ${sum / (grey.width * grey.height)}`);
});

test('trimMargin: pixels and a share of the box give the exact size', async () => {
  const trimmed = await removeBackground(input, { trim: true });
  const { width: w, height: h } = trimmed;
  assert.ok(w < 200 && h < 200, `${w}x${h}`);
  const px = await removeBackground(input, { trim: true, trimMargin: 30 });
  assert.equal([px.width, px.height], [w + 60, h + 60]);
  const text = await removeBackground(input, { trim: true, trimMargin: '12' });
  assert.equal([text.width, text.height], [w + 24, h + 24]);
  const share = await removeBackground(input, { trim: true, trimMargin: '10%' });
  assert.equal([share.width, share.height], [w + 2 * Math.round(w * 0.1), h + 2 * Math.round(h * 0.1)]);
  const zero = await removeBackground(input, { trim: true, trimMargin: 0 });
  assert.equal([zero.width, zero.height], [w, h]);
});

test('trimMargin past the image edge: the canvas grows with transparent pixels', async () => {
  const trimmed = await removeBackground(corner, { trim: true });
  const out = await removeBackground(corner, { trim: true, trimMargin: 500 });
  assert.equal([out.width, out.height], [trimmed.width + 1000, trimmed.height + 1000]);
  const image = await decode(out.data);
  for (const [x, y] of [[0, 0], [out.width - 1, 0], [0, out.height - 1], [out.width - 1, out.height - 1], [250, 250]]) {
    assert.is(image.data[(y! * image.width + x!) * 4 + 3], 0, `alpha at ${x},${y}`);
  }
  // The subject is in the middle, opaque.
  const cx = Math.floor(image.width / 2), cy = Math.floor(image.height / 2);
  assert.is(image.data[(cy * image.width + cx) * 4 + 3], 255);
  const half = await removeBackground(corner, { trim: true, trimMargin: '50%' });
  assert.equal([half.width, half.height], [trimmed.width * 2, trimmed.height * 2].map((v, i) => (i === 0 ? trimmed.width : trimmed.height) + 2 * Math.round(v / 4)));
});

async function expectOption(promise: Promise<unknown>, path: string, text: RegExp) {
  try {
    await promise;
  } catch (err) {
    assert.instance(err, MatteError);
    assert.is((err as MatteError).code, 'invalid_option');
    assert.is((err as MatteError).path, path);
    assert.match((err as MatteError).message, text);
    return;
  }
  assert.unreachable('no error');
}

test('bad trimMargin and channels: invalid_option with their path', async () => {
  await expectOption(removeBackground(input, { trimMargin: 10 }), 'trimMargin', /needs trim/);
  for (const bad of [501, -1, 1.5, '51%', '10 %', 'abc', '', '1e2', '0x10', '100000000%']) {
    await expectOption(removeBackground(input, { trim: true, trimMargin: bad }), 'trimMargin', /pixels/);
  }
  await expectOption(removeBackground(input, { channels: 'rgb' as never }), 'channels', /rgba, alpha/);
});

test.run();
