// run-tests: parallel
// What removeBackground does to an image, with the default model (u2netp): a synthetic subject on
// a plain background loses its background, at the full resolution of the image at that point of
// the pipeline; already-transparent images are left alone; animations get a matte per frame.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, loadModel, removeBackground, MatteError } from '../../lib/index.js';
import { decode, disc, formatOf, makeGif, makePng, pixel, type Decoded } from '../helpers/images.js';

const RED: [number, number, number] = [200, 30, 30];
const WHITE: [number, number, number] = [255, 255, 255];

test.before(async () => {
  await loadModel('u2netp');
});

const alphaAt = (image: Decoded, x: number, y: number) => pixel(image, x, y)[3];

function assertMatted(image: Decoded, label: string): void {
  const { width: w, height: h } = image;
  for (const [x, y] of [[0, 0], [w - 1, 0], [0, h - 1], [w - 1, h - 1]] as const)
    assert.ok(alphaAt(image, x, y) < 10, `${label}: corner ${x},${y} has alpha ${alphaAt(image, x, y)}`);
  assert.ok(alphaAt(image, w >> 1, h >> 1) > 245, `${label}: centre has alpha ${alphaAt(image, w >> 1, h >> 1)}`);
}

test('a subject on a plain background: corners transparent, centre opaque, colours kept', async () => {
  const out = await removeBackground(disc(320, 240, 70, RED, WHITE, { alpha: false }));
  assert.is(formatOf(out.data), 'png');
  assert.is(out.mediaType, 'image/png');
  assert.is(out.width, 320);
  assert.is(out.height, 240);
  const image = await decode(out.data);
  assert.ok(image.hasAlpha);
  assertMatted(image, 'png');
  assert.equal(pixel(image, 160, 120).slice(0, 3), RED);
});

test('the same through edit, and an opaque alpha band is replaced', async () => {
  const out = await edit(disc(320, 240, 70, RED, WHITE, { alpha: true }), [{ removeBackground: true }]);
  assertMatted(await decode(out.data), 'edit');
});

test('an already-transparent input is unchanged (byte-identical alpha)', async () => {
  const input = makePng(200, 150, (x, y) => [x & 255, y & 255, 90, (x + y) % 7 === 0 ? 128 : 255]);
  const before = await decode(input);
  const out = await edit(input, [{ removeBackground: true }]);
  const after = await decode(out.data);
  assert.ok(after.data.equals(before.data));
  const rb = await decode((await removeBackground(input)).data);
  assert.ok(rb.data.equals(before.data));
});

test('removeBackground before and after a resize both give full-resolution, smooth alpha', async () => {
  const input = disc(400, 300, 90, RED, WHITE, { alpha: false });
  const after = await edit(input, [{ resize: { width: 2000 } }, { removeBackground: true }]);
  const before = await edit(input, [{ removeBackground: true }, { resize: { width: 2000 } }]);
  for (const [label, out] of [['resize then matte', after], ['matte then resize', before]] as const) {
    assert.is(out.width, 2000, label);
    assert.is(out.height, 1500, label);
    const image = await decode(out.data);
    assertMatted(image, label);
    // No blockiness: along the middle row the alpha ramps over several pixels (a nearest-neighbour
    // upscale of a 320x320 matte to 2000 wide would jump by up to 255 in one pixel).
    let jump = 0;
    for (let x = 1; x < 2000; x++) jump = Math.max(jump, Math.abs(alphaAt(image, x, 750) - alphaAt(image, x - 1, 750)));
    assert.ok(jump < 100, `${label}: alpha jumps by ${jump} between neighbours`);
  }
  // Both mattes agree on where the subject is (the disc's edge at x = 1000 +- 450).
  const a = await decode(after.data), b = await decode(before.data);
  for (const x of [500, 520, 1480, 1500]) assert.ok(alphaAt(a, x, 750) < 30 && alphaAt(b, x, 750) < 30, `x=${x} outside`);
  for (const x of [600, 1000, 1400]) assert.ok(alphaAt(a, x, 750) > 225 && alphaAt(b, x, 750) > 225, `x=${x} inside`);
});

test('removeBackground at any position: after a rotate the matte follows the rotated image', async () => {
  const out = await edit(disc(320, 240, 70, RED, WHITE, { alpha: false }), [{ rotate: 90 }, { removeBackground: true }]);
  assert.is(out.width, 240);
  assert.is(out.height, 320);
  assertMatted(await decode(out.data), 'rotated');
});

test('remove-background trim crops to the subject', async () => {
  const input = makePng(400, 300, (x, y) => ((x + 0.5 - 120) ** 2 + (y + 0.5 - 100) ** 2 <= 60 * 60 ? RED : WHITE), { alpha: false });
  const out = await removeBackground(input, { trim: true });
  // The disc spans 60..180 x 40..160 (120 px); the soft edge adds a few pixels.
  assert.ok(out.width >= 118 && out.width <= 135, `width ${out.width}`);
  assert.ok(out.height >= 118 && out.height <= 135, `height ${out.height}`);
  const image = await decode(out.data);
  assert.ok(alphaAt(image, image.width >> 1, image.height >> 1) > 245);
  const untrimmed = await removeBackground(input, { trim: false });
  assert.is(untrimmed.width, 400);
});

test('webp output keeps alpha', async () => {
  const out = await removeBackground(disc(320, 240, 70, RED, WHITE, { alpha: false }), { format: 'webp' });
  assert.is(formatOf(out.data), 'webp');
  assert.is(out.mediaType, 'image/webp');
  const image = await decode(out.data);
  assert.ok(image.hasAlpha);
  assertMatted(image, 'webp');
});

// Frame i has the disc on the left (even i) or on the right (odd i), on white.
function movingDiscGif(frames: number): Buffer {
  const colours = Array.from({ length: frames }, () => WHITE);
  return makeGif(240, 120, colours, {
    frameFn: (i) => (x, y) => ((x + 0.5 - (i % 2 ? 180 : 60)) ** 2 + (y + 0.5 - 60) ** 2 <= 40 * 40 ? RED : WHITE),
  });
}

test('an animated GIF gets a matte per frame (webp and gif output)', async () => {
  const gif = movingDiscGif(3);
  for (const format of ['webp', 'gif'] as const) {
    const out = await edit(gif, [{ removeBackground: true }], { format, anim: true });
    assert.is(out.frames, 3, format);
    assert.is(formatOf(out.data), format);
    // Frame 0 (disc left) is matted on its own: its right half is transparent.
    const first = await decode(out.data);
    assert.ok(alphaAt(first, 60, 60) > 200 && alphaAt(first, 180, 60) < 30, `${format}: frame 0`);
  }
  // Each frame has its own matte: trimming to alpha > 0 over all frames keeps both discs' area.
  // (With frame 0's matte reused for frame 1, only the left disc would be kept.)
  const trimmed = await removeBackground(gif, { format: 'webp', trim: true, anim: true });
  assert.is(trimmed.frames, 3);
  assert.ok(trimmed.width > 180, `width ${trimmed.width}`);
  const still = await removeBackground(gif, { format: 'webp', trim: true, anim: false });
  assert.is(still.frames, 1);
  assert.ok(still.width < 100, `first frame only: width ${still.width}`);
});

test('more animation frames than the matte-frame limit: image_too_large', async () => {
  const gif = movingDiscGif(3);
  try {
    await edit(gif, [{ removeBackground: true }], { format: 'webp', anim: true, limits: { maxMatteFrames: 2 } });
    assert.unreachable('should have thrown');
  } catch (err) {
    assert.instance(err, MatteError);
    assert.is((err as MatteError).code, 'image_too_large');
  }
  // Within the limit, or with only the first frame used, it runs.
  const ok = await edit(gif, [{ removeBackground: true }], { format: 'webp', anim: true, limits: { maxMatteFrames: 3 } });
  assert.is(ok.frames, 3);
  const first = await edit(gif, [{ removeBackground: true }], { format: 'png', limits: { maxMatteFrames: 1 } });
  assert.is(first.frames, 1);
});

test.run();
