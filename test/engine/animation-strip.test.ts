// run-tests: parallel
// Animations through the frame strip (native/frames.h): a resize and per-pixel steps run as one
// pipeline over every frame stacked top to bottom; the frames, their size, delays, loop and
// pixels must be what frame-by-frame work gives. Decoded with omggif, not with libvips.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit } from '../../lib/index.js';
import { decodeGifFrames } from '../helpers/gif-frames.js';
import { decode, distance, makeGif, pixel } from '../helpers/images.js';

const colours: Array<[number, number, number]> = [
  [255, 0, 0],
  [0, 255, 0],
  [0, 0, 255],
  [255, 255, 0],
  [0, 255, 255],
  [255, 0, 255],
];
const delays = [40, 80, 120, 160, 200, 240];
// 60x40 frames: left half the frame's colour, right half white (a hard cut between frames, the
// worst case for a strip), so a mix-up of frames or of sides shows.
const gif = makeGif(60, 40, colours, { delays, repeat: 2, frameFn: (i) => (x) => (x < 30 ? colours[i]! : [255, 255, 255]) });
const white = [255, 255, 255, 255];

test('resize of an animation: every frame, its size, delay, loop and pixels', async () => {
  const out = await edit(gif, [{ resize: { width: 30 } }], { format: 'gif' });
  assert.equal([out.width, out.height, out.frames], [30, 20, 6]);
  const anim = decodeGifFrames(out.data);
  assert.equal([anim.width, anim.height, anim.frames.length], [30, 20, 6], 'the GIF screen is one frame');
  assert.equal(anim.frames.map((f) => f.delayMs), delays);
  assert.is(anim.loop, 2, 'repeat count kept');
  anim.frames.forEach((frame, i) => {
    const colour = [...colours[i]!, 255];
    // Away from the frame's top and bottom edge: exactly the frame's own colour and white.
    for (const y of [2, 10, 17]) {
      assert.ok(distance(pixel(frame, 5, y), colour) <= 8, `frame ${i} (5,${y}) ${pixel(frame, 5, y)}`);
      assert.ok(distance(pixel(frame, 25, y), white) <= 8, `frame ${i} (25,${y}) ${pixel(frame, 25, y)}`);
    }
    // The edge rows carry at most a trace of the neighbouring frame (resize_strip's note).
    // (measured 16/255 at this 2x downscale).
    for (const y of [0, 19]) assert.ok(distance(pixel(frame, 5, y), colour) <= 24, `frame ${i} edge row ${y} ${pixel(frame, 5, y)}`);
  });
});

test('an upscale is frame by frame: no row of a frame takes from its neighbour', async () => {
  const out = decodeGifFrames((await edit(gif, [{ resize: { width: 120 } }], { format: 'gif' })).data);
  assert.equal([out.width, out.height, out.frames.length], [120, 80, 6]);
  out.frames.forEach((frame, i) => {
    for (const y of [0, 1, 40, 78, 79]) assert.ok(distance(pixel(frame, 10, y), [...colours[i]!, 255]) <= 8, `frame ${i} row ${y} ${pixel(frame, 10, y)}`);
  });
});

test('a frame of the strip matches the same frame resized alone, away from its edges', async () => {
  const out = decodeGifFrames((await edit(gif, [{ resize: { width: 45, height: 30, fit: 'cover' } }], { format: 'gif' })).data);
  const alone = makeGif(60, 40, [colours[3]!], { frameFn: () => (x) => (x < 30 ? colours[3]! : [255, 255, 255]) });
  const expected = await decode((await edit(alone, [{ resize: { width: 45, height: 30, fit: 'cover' } }], { format: 'png' })).data);
  const frame = out.frames[3]!;
  assert.equal([frame.width, frame.height], [expected.width, expected.height]);
  for (let y = 3; y < 27; y += 4)
    for (let x = 0; x < 45; x += 4)
      assert.ok(distance(pixel(frame, x, y), pixel(expected, x, y)) <= 12, `(${x},${y}) ${pixel(frame, x, y)} vs ${pixel(expected, x, y)}`);
});

test('cover crops every frame to its own centre; per-frame steps after the strip see frames', async () => {
  // 60x40 -> cover 20x20: scaled to 30x20, the centre 20 columns (x 5..24 of the scaled frame):
  // 10 columns of the frame's colour, then 10 of white; rotate 90 then puts the colour on top.
  const out = await edit(gif, [{ resize: { width: 20, height: 20, fit: 'cover' } }, { rotate: 90 }, { brightness: 1 }], { format: 'gif' });
  assert.equal([out.width, out.height, out.frames], [20, 20, 6]);
  const anim = decodeGifFrames(out.data);
  anim.frames.forEach((frame, i) => {
    assert.ok(distance(pixel(frame, 10, 4), [...colours[i]!, 255]) <= 8, `frame ${i} top ${pixel(frame, 10, 4)}`);
    assert.ok(distance(pixel(frame, 10, 15), white) <= 8, `frame ${i} bottom ${pixel(frame, 10, 15)}`);
  });
});

test('per-pixel steps and a left-right flip on the strip; a vertical flip keeps the frame order', async () => {
  const mirrored = decodeGifFrames((await edit(gif, [{ flip: 'h' }, { contrast: 1 }, { resize: { width: 30 } }], { format: 'gif' })).data);
  assert.is(mirrored.frames.length, 6);
  mirrored.frames.forEach((frame, i) => {
    assert.ok(distance(pixel(frame, 25, 10), [...colours[i]!, 255]) <= 8, `frame ${i} right ${pixel(frame, 25, 10)}`);
    assert.ok(distance(pixel(frame, 5, 10), white) <= 8, `frame ${i} left ${pixel(frame, 5, 10)}`);
  });
  const upside = decodeGifFrames((await edit(gif, [{ flip: 'v' }], { format: 'gif' })).data);
  assert.equal(upside.frames.map((f) => f.delayMs), delays, 'frames (and their delays) in their order');
  upside.frames.forEach((frame, i) => assert.ok(distance(pixel(frame, 5, 0), [...colours[i]!, 255]) <= 8, `frame ${i}`));
});

test('webp out from the strip: frames, durations, first frame pixels', async () => {
  const out = await edit(gif, [{ resize: { width: 30 } }, { saturation: 1 }], { format: 'webp' });
  assert.equal([out.width, out.height, out.frames], [30, 20, 6]);
  const durations: number[] = [];
  for (let at = out.data.indexOf('ANMF'); at >= 0; at = out.data.indexOf('ANMF', at + 4)) durations.push(out.data.readUIntLE(at + 20, 3));
  assert.equal(durations, delays);
  const first = await decode(out.data);
  assert.ok(distance(pixel(first, 5, 10), [255, 0, 0, 255]) <= 12, `${pixel(first, 5, 10)}`);
});

test.run();
