// run-tests: parallel
// backgroundImage (docs/api.md, "Extensions: staged cut-outs"): the image so far over the request's
// background image, covered and centred, blended in linear light. The composite is compared with
// the blend computed here from the matte (handed in, so the model plays no part), the cut-out's
// colours and the background; a background image is an input, refused from its header.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { addon } from '../../lib/native.js';
import { edit, loadModel, MatteError, type EditOptions, type Operation } from '../../lib/index.js';
import { blendLinear } from '../helpers/blend.js';
import { tiledTiff } from '../helpers/declared-small.js';
import { givenMatte, matteOf } from '../helpers/given-matte.js';
import { convert, decode, makeGif, makePng, pixel, solid } from '../helpers/images.js';

const decodedBytes = () => (addon as unknown as { counters: () => { decodedBytes: number } }).counters().decodedBytes;

const W = 120, H = 90;
// A photo whose colours vary everywhere, and a soft-edged disc as its matte (partial alpha over ~6 px).
const photo = makePng(W, H, (x, y) => [40 + x * 1.5, 200 - y, 90 + ((x * y) % 60)], { alpha: false });
const matte = matteOf(W, H, (x, y) => Math.max(0, Math.min(255, Math.round((30 - Math.hypot(x + 0.5 - 60, y + 0.5 - 45)) * 40 + 128))));
const backdrop = makePng(W, H, (x, y) => [(x * 7) % 256, 30 + y, 250 - x], { alpha: false });

test.before(async () => {
  await loadModel('u2netp');
});

async function cutOut(ops: Operation[], options: EditOptions = {}) {
  return edit(photo, [{ removeBackground: true }, ...ops], { matteCache: givenMatte(matte, W, H), ...options });
}

test('the composite is the linear-light blend of the cut-out over the background, within 1/255', async () => {
  const cut = await decode((await cutOut([])).data);
  const staged = await cutOut([{ backgroundImage: true }], { backgroundImage: backdrop });
  assert.is(staged.format, 'png');
  const out = await decode(staged.data);
  assert.is(out.hasAlpha, false, 'an opaque background makes the result opaque');
  const under = await decode(backdrop);
  let worst = 0, partial = 0;
  for (let i = 0; i < W * H; i++) {
    const a = cut.data[i * 4 + 3]!;
    assert.is(a, matte[i], 'the cut-out keeps the matte handed in');
    if (a > 0 && a < 255) partial++;
    for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(out.data[i * 4 + c]! - blendLinear(cut.data[i * 4 + c]!, a, under.data[i * 4 + c]!)));
  }
  assert.ok(partial > 300, `${partial} edge pixels`);
  assert.ok(worst <= 1, `largest difference ${worst.toFixed(2)} levels`);
});

test('a shadow goes onto the background in sRGB (its opacity as in any design tool), the subject in linear light', async () => {
  const square = makePng(240, 180, (x, y) => (x >= 60 && x < 100 && y >= 30 && y < 70 ? [200, 40, 40, 255] : [0, 0, 0, 0]));
  const shadow = { shadow: { offsetX: 70, offsetY: 60, blur: 10, opacity: 0.5 } } as const;
  const layers = await decode((await edit(square, [shadow])).data);
  const grey = solid(240, 180, [200, 200, 200]);
  const staged = await decode((await edit(square, [shadow, { backgroundImage: true }], { backgroundImage: grey })).data);
  let checked = 0;
  for (let y = 0; y < 180; y++)
    for (let x = 0; x < 240; x++) {
      const [, , , s] = pixel(layers, x, y);
      if (x >= 60 && x < 100 && y >= 30 && y < 70) continue;
      const expected = 200 * (1 - s / 255); // black at alpha s over 200, in sRGB
      assert.ok(Math.abs(pixel(staged, x, y)[0] - expected) <= 1, `at ${x},${y}: ${pixel(staged, x, y)[0]}, expected ${expected.toFixed(1)} (alpha ${s})`);
      if (s > 60) checked++;
    }
  assert.ok(checked > 500, `${checked} shadow pixels`);
});

test('the background is scaled to cover the canvas and centred', async () => {
  const clear = solid(100, 100, [0, 0, 0, 0]);
  // Wider than the canvas at its height: not scaled, the middle third kept.
  const bands = makePng(300, 100, (x) => (x < 100 ? [255, 0, 0] : x < 200 ? [0, 255, 0] : [0, 0, 255]), { alpha: false });
  const wide = await decode((await edit(clear, [{ backgroundImage: true }], { backgroundImage: bands })).data);
  assert.equal([wide.width, wide.height], [100, 100]);
  for (const [x, y] of [[0, 0], [99, 99], [50, 50]] as const) assert.equal(pixel(wide, x, y), [0, 255, 0, 255]);
  // Smaller: scaled by 4 to 200x100 to cover the height, the middle 100 columns kept.
  const halves = makePng(50, 25, (x, y) => (y < 12 ? [255, 0, 0] : y >= 13 ? [0, 0, 255] : [128, 0, 128]), { alpha: false });
  const small = await decode((await edit(clear, [{ backgroundImage: true }], { backgroundImage: halves })).data);
  assert.equal(pixel(small, 5, 10), [255, 0, 0, 255]);
  assert.equal(pixel(small, 95, 90), [0, 0, 255, 255]);
});

test('a background with alpha goes under the image: alpha a + b (1 - a)', async () => {
  const half = solid(40, 30, [255, 255, 255, 128]);
  const out = await decode((await edit(solid(40, 30, [0, 0, 255, 128]), [{ backgroundImage: true }], { backgroundImage: half })).data);
  const p = pixel(out, 20, 15);
  assert.ok(Math.abs(p[3] - (128 + 128 * (1 - 128 / 255))) <= 1, `alpha ${p[3]}`);
  assert.ok(p[2] > p[0], 'blue over white stays bluish');
});

test('an opaque image hides the background: nothing changes', async () => {
  const input = makePng(30, 20, (x) => [x * 8, 10, 20], { alpha: false });
  const plain = await decode((await edit(input, [{ flip: 'h' }])).data);
  const over = await decode((await edit(input, [{ flip: 'h' }, { backgroundImage: true }], { backgroundImage: backdrop })).data);
  assert.equal(over.data, plain.data);
});

test('every frame of an animation goes over the same background', async () => {
  // Three frames, each half transparent (an animated WebP with alpha made from a GIF's frames).
  const colours: Array<[number, number, number]> = [[255, 0, 0], [0, 255, 0], [0, 0, 255]];
  const gif = makeGif(20, 20, colours, { frameFn: (i) => (x) => (x < 10 ? colours[i]! : [255, 255, 255]) });
  const clear = await edit(gif, [{ brightness: 1 }], { format: 'webp', quality: 100 });
  const halves = await edit(clear.data, [{ place: { aspectRatio: '2:1' } }], { format: 'webp', quality: 100 });
  assert.is(halves.frames, 3);
  const out = await edit(halves.data, [{ backgroundImage: true }], { format: 'gif', backgroundImage: solid(40, 20, [9, 9, 9]) });
  assert.is(out.frames, 3);
  assert.equal([out.width, out.height], [40, 20]);
  const first = await decode(out.data);
  assert.ok(pixel(first, 2, 10)[0] < 30 && pixel(first, 37, 10)[0] < 30, 'the padding shows the background');
  assert.ok(pixel(first, 14, 10)[0] > 200, 'the frame over it');
});

test('a large JPEG background is decoded with shrink-on-load to what covering the canvas needs', async () => {
  const big = (await edit(solid(40, 30, [10, 120, 200]), [{ resize: { width: 4000, height: 3000 } }], { format: 'jpeg' })).data;
  const clear = solid(200, 150, [0, 0, 0, 0]);
  const before = decodedBytes();
  const out = await edit(clear, [{ backgroundImage: true }], { backgroundImage: big });
  const decoded = decodedBytes() - before;
  assert.equal([out.width, out.height], [200, 150]);
  // The background decoded at 1/8 (500x375x3; its header check decodes nothing), and the 200x150x4 input.
  assert.ok(decoded <= 500 * 375 * 3 + 200 * 150 * 4, `${decoded} bytes decoded`);
});

async function refusal(backgroundImage: Buffer, options: EditOptions = {}) {
  const before = decodedBytes();
  try {
    await cutOut([{ backgroundImage: true }], { backgroundImage, ...options });
  } catch (err) {
    assert.instance(err, MatteError);
    // Refused from its header, before the input's decoder was opened.
    assert.is(decodedBytes(), before, 'nothing was decoded');
    return err as MatteError;
  }
  throw new Error('the background image was accepted');
}

test('a background image that is not an image, too large or lying about its size is refused at its path before decoding', async () => {
  const notImage = await refusal(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'));
  assert.is(notImage.code, 'unsupported_image');
  assert.is(notImage.path, 'backgroundImage');
  assert.match(notImage.message, /background image is not a JPEG/);
  const empty = await refusal(Buffer.alloc(0));
  assert.is(empty.code, 'unsupported_image');
  const large = await refusal(await convert(solid(200, 200, [1, 2, 3]), 'png'), { limits: { maxPixels: 20_000 } });
  assert.is(large.code, 'image_too_large');
  assert.is(large.path, 'backgroundImage');
  const bomb = await refusal(tiledTiff({ width: 1, height: 1, tileWidth: 9984, tileHeight: 9984 }));
  assert.is(bomb.code, 'unsupported_image');
  assert.is(bomb.path, 'backgroundImage');
});

test('the operation without a background image, and a background image without the operation, are refused', async () => {
  try {
    await edit(photo, [{ flip: 'h' }, { backgroundImage: true }]);
    assert.unreachable();
  } catch (err) {
    assert.is((err as MatteError).code, 'invalid_operations');
    assert.is((err as MatteError).path, 'operations[1].backgroundImage');
  }
  try {
    await edit(photo, [{ flip: 'h' }], { backgroundImage: backdrop });
    assert.unreachable();
  } catch (err) {
    assert.is((err as MatteError).code, 'invalid_option');
    assert.is((err as MatteError).path, 'backgroundImage');
  }
  try {
    await edit(photo, [{ backgroundImage: true }, { backgroundImage: true }], { backgroundImage: backdrop });
    assert.unreachable();
  } catch (err) {
    assert.is((err as MatteError).path, 'operations[1].backgroundImage');
  }
});

test.run();
