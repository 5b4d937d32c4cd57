// run-tests: parallel
// Animated GIF and WebP: every frame goes through the steps (per frame, not on the strip), gif and
// webp outputs keep frames, delays and loop; anim=false or a still format gives the first frame.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit } from '../../lib/index.js';
import { decode, formatOf, gifFrames, makeGif, pixel, distance } from '../helpers/images.js';

const colours: Array<[number, number, number]> = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0]];
// 40x20 frames: left half the frame's colour, right half white, so rotation and flips show.
const gif = makeGif(40, 20, colours, {
  delay: 70,
  repeat: 3,
  frameFn: (i) => (x) => (x < 20 ? colours[i]! : [255, 255, 255]),
});

test('gif in, gif out: all frames, resized and rotated per frame, delays and loop kept', async () => {
  const out = await edit(gif, [{ rotate: 90 }, { resize: { width: 10 } }], { format: 'gif' });
  assert.equal([out.width, out.height, out.frames], [10, 20, 4]);
  assert.is(formatOf(out.data), 'gif');
  assert.is(gifFrames(out.data), 4);
  // Graphic control extension: 0x21 0xF9 0x04 flags delay(le16, centiseconds).
  const gce = out.data.indexOf(Buffer.from([0x21, 0xf9, 0x04]));
  assert.ok(gce > 0);
  assert.is(out.data.readUInt16LE(gce + 4), 7, 'delay 70 ms = 7 cs');
  // NETSCAPE2.0 loop count.
  const netscape = out.data.indexOf(Buffer.from('NETSCAPE2.0', 'latin1'));
  assert.ok(netscape > 0, 'loop extension present');
  assert.is(out.data.readUInt16LE(netscape + 13), 3, 'repeat count 3, as in the input');
  // Frame 0 rotated clockwise: its left (red) half is now the top half.
  const first = await decode(out.data);
  assert.ok(distance(pixel(first, 5, 2), [255, 0, 0, 255]) <= 24, `top ${pixel(first, 5, 2)}`);
  assert.ok(distance(pixel(first, 5, 17), [255, 255, 255, 255]) <= 24, `bottom ${pixel(first, 5, 17)}`);
});

test('gif in, webp out keeps the animation; webp in, gif out too', async () => {
  const webp = await edit(gif, [{ flip: 'h' }], { format: 'webp' });
  assert.is(formatOf(webp.data), 'webp');
  assert.is(webp.frames, 4);
  assert.ok(webp.data.includes(Buffer.from('ANMF', 'latin1')), 'animated webp');
  // WebP counts plays, GIF repeats: 3 repeats are 4 plays. Frame duration: 24-bit LE at ANMF + 20.
  assert.is(webp.data.readUInt16LE(webp.data.indexOf(Buffer.from('ANIM', 'latin1')) + 12), 4);
  assert.is(webp.data.readUIntLE(webp.data.indexOf(Buffer.from('ANMF', 'latin1')) + 20, 3), 70);
  const back = await edit(webp.data, [{ resize: { width: 20 } }], { format: 'gif' });
  assert.equal([back.width, back.height, back.frames], [20, 10, 4]);
  assert.is(gifFrames(back.data), 4);
});

test('anim=false gives the first frame only', async () => {
  const out = await edit(gif, [{ flip: 'h' }], { format: 'gif', anim: false });
  assert.is(out.frames, 1);
  assert.is(gifFrames(out.data), 1);
  const image = await decode(out.data);
  assert.ok(distance(pixel(image, 35, 10), [255, 0, 0, 255]) <= 24, 'the first (red) frame, flipped');
});

test('a format that cannot animate gives the first frame', async () => {
  for (const format of ['png', 'jpeg', 'avif'] as const) {
    const out = await edit(gif, [{ flip: 'h' }], { format });
    assert.equal([out.width, out.height, out.frames], [40, 20, 1], format);
  }
});

test('trim on an animation crops every frame to the same box', async () => {
  const boxed = makeGif(30, 30, colours.slice(0, 2), {
    frameFn: (i) => (x, y) => (i === 0 ? x >= 5 && x < 15 && y >= 5 && y < 10 : x >= 10 && x < 20 && y >= 12 && y < 20) ? [0, 0, 0] : [255, 255, 255],
  });
  const out = await edit(boxed, [{ trim: true }], { format: 'gif' });
  // Union of (5..14, 5..9) and (10..19, 12..19): 15 x 15.
  assert.equal([out.width, out.height, out.frames], [15, 15, 2]);
});

test('the frame limit is checked from the file structure', async () => {
  const many = makeGif(4, 4, Array.from({ length: 30 }, (_, i) => [i * 8, 0, 0] as [number, number, number]));
  try {
    await edit(many, [{ flip: 'h' }], { format: 'gif', limits: { maxFrames: 20 } });
    assert.unreachable();
  } catch (err: any) {
    assert.is(err.code, 'image_too_large');
    assert.match(err.message, /30 frames/);
  }
  // Only the first frame is used (and counted) when the output is a still.
  const still = await edit(many, [{ flip: 'h' }], { format: 'png', limits: { maxFrames: 20 } });
  assert.is(still.frames, 1);
});

test('the pixel limit counts the frames used', async () => {
  const anim = makeGif(100, 100, colours); // 4 x 10 000 pixels
  try {
    await edit(anim, [{ flip: 'h' }], { format: 'webp', limits: { maxPixels: 30_000 } });
    assert.unreachable();
  } catch (err: any) {
    assert.is(err.code, 'image_too_large');
  }
  const first = await edit(anim, [{ flip: 'h' }], { format: 'webp', anim: false, limits: { maxPixels: 30_000 } });
  assert.is(first.frames, 1);
});

test.run();
