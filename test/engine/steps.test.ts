// run-tests: parallel
// The pixel effect of every step other than resize (docs/api.md, "Operations (edit)"), and the order of steps.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, type Operation } from '../../lib/index.js';
import { decode, disc, distance, makePng, pixel, solid, type Rgba } from '../helpers/images.js';

// A 3x2 image whose every pixel is distinct: (x, y) -> [10 + 40x, 100 + 50y, 7].
const marks = makePng(3, 2, (x, y) => [10 + 40 * x, 100 + 50 * y, 7], { alpha: false });
const mark = (x: number, y: number): Rgba => [10 + 40 * x, 100 + 50 * y, 7, 255];

async function pixels(input: Buffer, ops: Operation[]) {
  return decode((await edit(input, ops)).data);
}

async function centre(input: Buffer, ops: Operation[]): Promise<Rgba> {
  const image = await pixels(input, ops);
  return pixel(image, Math.floor(image.width / 2), Math.floor(image.height / 2));
}

test('rotate 90 is clockwise and exact', async () => {
  const image = await pixels(marks, [{ rotate: 90 }]);
  assert.is(image.width, 2);
  assert.is(image.height, 3);
  // Clockwise: the bottom-left pixel goes to the top-left.
  assert.equal(pixel(image, 0, 0), mark(0, 1));
  assert.equal(pixel(image, 1, 0), mark(0, 0));
  assert.equal(pixel(image, 0, 2), mark(2, 1));
});

test('rotate 180 and 270', async () => {
  const r180 = await pixels(marks, [{ rotate: 180 }]);
  assert.equal([r180.width, r180.height], [3, 2]);
  assert.equal(pixel(r180, 0, 0), mark(2, 1));
  const r270 = await pixels(marks, [{ rotate: 270 }]);
  assert.equal([r270.width, r270.height], [2, 3]);
  assert.equal(pixel(r270, 0, 0), mark(2, 0));
});

test('flip h mirrors left-right, v top-bottom, hv both', async () => {
  assert.equal(pixel(await pixels(marks, [{ flip: 'h' }]), 0, 0), mark(2, 0));
  assert.equal(pixel(await pixels(marks, [{ flip: 'v' }]), 0, 0), mark(0, 1));
  assert.equal(pixel(await pixels(marks, [{ flip: 'hv' }]), 0, 0), mark(2, 1));
});

test('blur 0 is a no-op; blur spreads an edge; alpha is blurred premultiplied', async () => {
  const edge = makePng(40, 10, (x) => (x < 20 ? [0, 0, 0] : [255, 255, 255]), { alpha: false });
  const none = await pixels(edge, [{ blur: 0 }]);
  assert.equal(pixel(none, 19, 5), [0, 0, 0, 255]);
  const blurred = await pixels(edge, [{ blur: 4 }]);
  const left = pixel(blurred, 19, 5)[0];
  const right = pixel(blurred, 20, 5)[0];
  assert.ok(left > 60 && left < 128 && right > 128 && right < 195, `edge ${left} / ${right}`);
  assert.equal(pixel(blurred, 2, 5), [0, 0, 0, 255], 'far from the edge stays black');
  // Red disc on transparent black: blurred pixels must stay pure red (no dark fringe).
  const soft = await pixels(disc(60, 60, 15, [255, 0, 0, 255], [0, 0, 0, 0]), [{ blur: 6 }]);
  let fringe = 0;
  for (let x = 0; x < 60; x++) {
    const p = pixel(soft, x, 30);
    if (p[3] > 20 && p[3] < 235) {
      fringe++;
      assert.ok(p[0] >= 250, `x=${x} ${p}: colour must stay red`);
    }
  }
  assert.ok(fringe > 4, 'the disc edge is soft');
});

test('a small blur keeps a flat image as it is (libvips 8.14 approximate masks went black below sigma ~0.55)', async () => {
  const white = makePng(16, 16, () => [255, 255, 255], { alpha: false });
  for (const blur of [0.5, 1, 1.5, 20, 30]) assert.equal(await centre(white, [{ blur }]), [255, 255, 255, 255], `blur ${blur}`);
});

test('a step after a blur sees exactly the blurred pixels (the blur is computed once, into memory)', async () => {
  const input = makePng(120, 90, (x, y) => [(x * 7) % 256, (y * 11) % 256, ((x + y) * 5) % 256], { alpha: false });
  for (const next of [{ resize: { width: 40 } }, { rotate: 90 }] as Operation[]) {
    const inOneCall = await edit(input, [{ blur: 8 }, next]);
    const blurred = await edit(input, [{ blur: 8 }]);
    const inTwoCalls = await edit(blurred.data, [next]);
    assert.ok(inOneCall.data.equals(inTwoCalls.data), JSON.stringify(next));
  }
});

test('blur 250 (the maximum) works', async () => {
  const image = await pixels(makePng(64, 64, (x) => (x < 32 ? [0, 0, 0] : [255, 255, 255]), { alpha: false }), [{ blur: 250 }]);
  assert.is(image.width, 64);
});

test('brightness multiplies colour in sRGB, clamped; 0 is black; alpha untouched', async () => {
  const input = solid(4, 4, [100, 150, 201, 77]);
  assert.equal(await centre(input, [{ brightness: 1 }]), [100, 150, 201, 77]);
  assert.equal(await centre(input, [{ brightness: 1.5 }]), [150, 225, 255, 77]);
  assert.equal(await centre(input, [{ brightness: 0.5 }]), [50, 75, 101, 77]);
  assert.equal(await centre(input, [{ brightness: 0 }]), [0, 0, 0, 77]);
});

test('contrast: (in - 128) * c + 128, clamped; 0 is flat mid-grey; alpha untouched', async () => {
  const input = solid(4, 4, [100, 150, 201, 200]);
  assert.equal(await centre(input, [{ contrast: 2 }]), [72, 172, 255, 200]);
  assert.equal(await centre(input, [{ contrast: 0.5 }]), [114, 139, 165, 200]);
  assert.equal(await centre(input, [{ contrast: 0 }]), [128, 128, 128, 200]);
});

test('saturation: 0 is grey (luma), 1 unchanged, >1 pushes away from luma; alpha untouched', async () => {
  const input = solid(4, 4, [200, 100, 50, 99]);
  const luma = 0.2126 * 200 + 0.7152 * 100 + 0.0722 * 50; // 117.65
  const grey = await centre(input, [{ saturation: 0 }]);
  assert.ok(distance(grey, [luma, luma, luma, 99]) <= 1, `grey ${grey}`);
  assert.equal(await centre(input, [{ saturation: 1 }]), [200, 100, 50, 99]);
  const half = await centre(input, [{ saturation: 0.5 }]);
  assert.ok(distance(half, [(200 + luma) / 2, (100 + luma) / 2, (50 + luma) / 2, 99]) <= 1, `half ${half}`);
  const more = await centre(input, [{ saturation: 2 }]);
  assert.ok(distance(more, [255, 100 + (100 - luma), 0, 99]) <= 1, `more ${more}`);
});

test('background: opaque colour makes the image opaque; alpha colour composites; transparent is a no-op', async () => {
  const input = solid(4, 4, [200, 0, 0, 128]);
  const opaque = await pixels(input, [{ background: '#0000ff' }]);
  assert.ok(distance(pixel(opaque, 1, 1), [100, 0, 127, 255]) <= 1, `${pixel(opaque, 1, 1)}`);
  const half = pixel(await pixels(input, [{ background: 'rgba(0, 0, 255, 0.5)' }]), 1, 1);
  // alpha = a + a_bg (1 - a) = 128 + 127.5 * (127 / 255)
  assert.ok(Math.abs(half[3] - 191.5) <= 1, `alpha ${half[3]}`);
  assert.ok(half[0] > half[2], 'the image stays on top');
  assert.equal(pixel(await pixels(input, [{ background: 'transparent' }]), 1, 1), [200, 0, 0, 128]);
  const hsl = pixel(await pixels(solid(2, 2, [0, 0, 0, 0]), [{ background: 'hsl(120 100% 50%)' }]), 0, 0);
  assert.equal(hsl, [0, 255, 0, 255]);
});

test('background has no effect on an opaque image', async () => {
  const image = await pixels(solid(4, 4, [10, 20, 30], { alpha: false }), [{ background: 'red' }]);
  assert.equal(pixel(image, 0, 0), [10, 20, 30, 255]);
});

test('trim removes a uniform border of the top-left colour (threshold 10)', async () => {
  const out = await edit(disc(100, 80, 20, [255, 0, 0], [255, 255, 255], { alpha: false }), [{ trim: true }]);
  assert.equal([out.width, out.height], [40, 40]);
  // Noise within the threshold counts as border.
  const noisy = makePng(50, 50, (x, y) => (x >= 20 && x < 30 && y >= 10 && y < 40 ? [0, 0, 0] : [250 - ((x * 7 + y * 3) % 8), 250, 250]), { alpha: false });
  const trimmed = await edit(noisy, [{ trim: true }]);
  assert.equal([trimmed.width, trimmed.height], [10, 30]);
});

test('trim of a transparent border trims transparency; a uniform image is left as it is', async () => {
  const out = await edit(disc(100, 80, 20, [0, 0, 255, 255], [0, 0, 0, 0]), [{ trim: true }]);
  assert.equal([out.width, out.height], [40, 40]);
  const uniform = await edit(solid(30, 20, [5, 5, 5], { alpha: false }), [{ trim: true }]);
  assert.equal([uniform.width, uniform.height], [30, 20]);
});

test('order of operations matters: rotate then resize differs from resize then rotate', async () => {
  const a = await edit(marks, [{ rotate: 90 }, { resize: { width: 4, fit: 'cover' } }]);
  const b = await edit(marks, [{ resize: { width: 4, fit: 'cover' } }, { rotate: 90 }]);
  assert.equal([a.width, a.height], [4, 6]);
  assert.equal([b.width, b.height], [3, 4]);
  // background before brightness darkens the background too; after, it does not.
  const semi = solid(2, 2, [0, 0, 0, 0]);
  const first = pixel(await pixels(semi, [{ background: '#ffffff' }, { brightness: 0.5 }]), 0, 0);
  const last = pixel(await pixels(semi, [{ brightness: 0.5 }, { background: '#ffffff' }]), 0, 0);
  assert.equal(first, [128, 128, 128, 255]);
  assert.equal(last, [255, 255, 255, 255]);
});

test('a 20-operation list runs in order', async () => {
  const ops: Operation[] = [
    { resize: { width: 200, height: 100, fit: 'cover' } },
    { rotate: 90 },
    { flip: 'h' },
    { blur: 1 },
    { brightness: 1.1 },
    { contrast: 1.1 },
    { saturation: 0.9 },
    { background: '#123456' },
    { trim: true },
    { rotate: 270 },
    { flip: 'v' },
    { resize: { width: 50 } },
    { blur: 0 },
    { brightness: 1 },
    { contrast: 1 },
    { saturation: 1 },
    { rotate: 180 },
    { flip: 'hv' },
    { resize: { width: 60, height: 60, fit: 'crop' } },
    { resize: { width: 40, height: 40, fit: 'scale-down' } },
  ];
  assert.is(ops.length, 20);
  const out = await edit(disc(300, 300, 100, [255, 0, 0], [255, 255, 255], { alpha: false }), ops, { format: 'webp' });
  // 200x100 -> rotated 100x200 -> trim cuts the white above and below the disc: 100x134 ->
  // rotated 134x100 -> 50x37 -> crop keeps 50x37 -> scale-down into 40x40 gives 40x30.
  assert.equal([out.width, out.height], [40, 30]);
});

test.run();
