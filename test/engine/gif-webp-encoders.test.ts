// run-tests: parallel
// GIF and animated WebP output (native/encode/gif.cc: libimagequant and cgif called directly;
// native/encode/webp_anim.cc: WebPAnimEncoder called directly, both so that the job's budget
// reaches the encode) against what libvips 8.14's gifsave and webpsave made of the same frames
// before (test/helpers/libvips-save.cc, built here against the system libvips), on photos, pixel
// art, soft and hard alpha, grey, grey + alpha, 16-bit, and animations with and without alpha.
//
// Tolerance: none. The GIF is gifsave's file byte for byte; the animated WebP holds webpsave's
// chunks (ANIM, every ANMF frame bitstream, offset, duration and flags) byte for byte, without the
// 186-byte EXIF chunk libvips 8.14 wrote despite strip (the still encoder drops it the same way),
// so it is 194 bytes smaller and decodes to the same pixels. An independent decoder (omggif)
// checks the GIF frames against the source as well.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PNG } from 'pngjs';
import gifenc from 'gifenc';
import { convert, decode, formatOf, makeGif, makePng, type Rgba } from '../helpers/images.js';
import { decodeGifFrames } from '../helpers/gif-frames.js';
import { buildLibvipsProgram } from '../helpers/libvips-program.js';
import { uninstrumentedEnv } from '../helpers/uninstrumented-env.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'matte-gif-webp-'));
const referenceProgram = join(dir, 'libvips-save');
const plainEnv = uninstrumentedEnv();
const QUALITY = 80;

// Photo-like (3 bands): smooth shading under a fixed pixel noise, many distinct colours.
const grain = (x: number, y: number) => (((x * 7919) ^ (y * 104729)) % 29) - 14;
const photo = makePng(320, 240, (x, y) => [
  Math.round(110 + 70 * Math.sin(x / 19) * Math.cos(y / 31) + grain(x, y)),
  Math.round(100 + 50 * Math.cos(y / 17) + grain(y, x)),
  Math.round(80 + (x + y) / 5 + grain(x + 3, y)),
], { alpha: false });
// Pixel art: a few flat colours in blocks.
const pixelArt = makePng(96, 64, (x, y) => (((x >> 3) + (y >> 3)) % 3 === 0 ? [220, 40, 40] : (x >> 2) % 5 === 0 ? [20, 20, 200] : [250, 250, 240]), { alpha: false });
// A cut-out whose edge is soft: alpha crosses the 128 threshold.
const cutout = makePng(200, 160, (x, y) => {
  const d = Math.hypot(x - 100, y - 80) - 60;
  return [30 + (x % 50), 160, 90 + (y % 40), Math.round(255 * Math.min(1, Math.max(0, (4 - d) / 8)))];
});
// Partial alpha everywhere: a ramp from transparent to opaque.
const ramp = makePng(100, 80, (x) => [200, (x * 3) & 255, 60, Math.min(255, x * 3)]);

/** A PNG of colour type 0 (grey) or 4 (grey + alpha), or 16-bit RGBA from 8-bit samples (their low byte varied). */
function pngOf(width: number, height: number, fn: (x: number, y: number) => Rgba, colorType: 0 | 4 | 6, bitDepth: 8 | 16 = 8): Buffer {
  const png = new PNG({ width, height, colorType, inputColorType: 6, bitDepth, inputHasAlpha: true });
  if (bitDepth === 16) png.data = Buffer.alloc(width * height * 8);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const p = fn(x, y);
      const i = y * width + x;
      if (bitDepth === 16) p.forEach((v, c) => png.data.writeUInt16BE(v * 256 + ((x * 31 + y * 17 + c) % 256), i * 8 + c * 2));
      else png.data.set(p, i * 4);
    }
  return PNG.sync.write(png, { colorType, inputColorType: 6, bitDepth, inputHasAlpha: true });
}
const grey = pngOf(120, 90, (x, y) => [(x * 2 + y) & 255, (x * 2 + y) & 255, (x * 2 + y) & 255, 255], 0);
const greyAlpha = pngOf(120, 90, (x, y) => [(x * 2 + y) & 255, (x * 2 + y) & 255, (x * 2 + y) & 255, (x * 3) & 255], 4);
const rgba16 = pngOf(100, 80, (x, y) => [(x * 2) & 255, (y * 3) & 255, 117, (x + y) & 255], 6, 16);

// An opaque animation: a disc moving over shading, delays in ms as GIF stores them (centiseconds).
const moving = makeGif(120, 80, [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]], {
  delays: [40, 30, 150, 10, 70],
  repeat: 3,
  frameFn: (i) => (x, y) => [Math.round(128 + 100 * Math.sin((x + i * 9) / 11)), (y * 3) & 255, Math.hypot(x - 60 - i * 6, y - 40) < 20 ? 255 : 30],
});

/** An animated GIF with a transparent hole moving across opaque frames; `repeat` -1: no loop extension (plays once). */
function holeGif(width: number, height: number, frames: number, repeat: number): Buffer {
  const gif = gifenc.GIFEncoder();
  for (let i = 0; i < frames; i++) {
    const rgba = new Uint8Array(width * height * 4);
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) {
        const hole = Math.hypot(x - 10 - i * 8, y - height / 2) < 12;
        rgba.set(hole ? [0, 0, 0, 0] : [(x * 5) & 255, (y * 7 + i * 20) & 255, 120, 255], (y * width + x) * 4);
      }
    const palette = gifenc.quantize(rgba, 256, { format: 'rgba4444', oneBitAlpha: true });
    const index = gifenc.applyPalette(rgba, palette, 'rgba4444');
    const transparent = palette.findIndex((p) => p[3] === 0);
    gif.writeFrame(index, width, height, { palette, delay: 80, repeat, transparent: transparent >= 0, transparentIndex: Math.max(0, transparent), dispose: 2 });
  }
  gif.finish();
  return Buffer.from(gif.bytes());
}
const holes = holeGif(96, 48, 6, 0);
const once = holeGif(40, 30, 3, -1);
const twice = holeGif(40, 30, 3, 1);

const cases: Array<[string, Buffer]> = [
  ['photo', photo], ['pixel art', pixelArt], ['soft cut-out', cutout], ['alpha ramp', ramp], ['grey', grey],
  ['grey + alpha', greyAlpha], ['16-bit RGBA', rgba16], ['moving disc', moving], ['moving hole', holes],
  ['played once', once], ['played twice', twice],
];

test.before(async () => {
  await buildLibvipsProgram(referenceProgram, ['test/helpers/libvips-save.cc'], 'vips-cpp');
});
test.after(() => rmSync(dir, { recursive: true, force: true }));

async function libvipsSave(input: Buffer, name: string, format: 'gif' | 'webp'): Promise<Buffer> {
  const file = name.replace(/\W+/g, '-');
  const source = join(dir, `${file}.${formatOf(input)}`), output = join(dir, `${file}.${format}`);
  writeFileSync(source, input);
  await run(referenceProgram, [source, output, String(QUALITY)], { env: plainEnv, timeout: 120_000 });
  return readFileSync(output);
}

/** The chunks of a RIFF WebP, in order. */
function chunks(webp: Buffer): Array<{ type: string; body: Buffer }> {
  const out: Array<{ type: string; body: Buffer }> = [];
  for (let at = 12; at + 8 <= webp.length; ) {
    const size = webp.readUInt32LE(at + 4);
    out.push({ type: webp.toString('latin1', at, at + 4), body: webp.subarray(at + 8, at + 8 + size) });
    at += 8 + size + (size & 1);
  }
  return out;
}

/** Mean and largest per-channel difference (0..255) of two RGBA buffers. */
function difference(a: Buffer, b: Buffer): { mean: number; max: number } {
  assert.is(a.length, b.length);
  let sum = 0, max = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i]! - b[i]!);
    sum += d;
    if (d > max) max = d;
  }
  return { mean: sum / a.length, max };
}

for (const [name, input] of cases) {
  test(`${name}: the GIF is libvips' gifsave's, byte for byte`, async () => {
    const ours = await convert(input, 'gif', { quality: QUALITY });
    const theirs = await libvipsSave(input, name, 'gif');
    assert.is(formatOf(ours), 'gif');
    assert.ok(ours.equals(theirs), `${name}: ${ours.length} bytes against gifsave's ${theirs.length}`);
  });

  test(`${name}: the WebP holds libvips' webpsave's chunks, without its EXIF`, async () => {
    const ours = await convert(input, 'webp', { quality: QUALITY });
    const theirs = await libvipsSave(input, name, 'webp');
    const mine = chunks(ours).filter((c) => c.type !== 'VP8X');
    const reference = chunks(theirs).filter((c) => c.type !== 'VP8X' && c.type !== 'EXIF');
    assert.equal(mine.map((c) => c.type), reference.map((c) => c.type), name);
    mine.forEach((c, i) => assert.ok(c.body.equals(reference[i]!.body), `${name}: ${c.type} chunk ${i} differs`));
    const exif = chunks(theirs).find((c) => c.type === 'EXIF');
    const vp8x = chunks(theirs).some((c) => c.type === 'VP8X') && !chunks(ours).some((c) => c.type === 'VP8X');
    assert.is(ours.length, theirs.length - (exif ? 8 + exif.body.length : 0) - (vp8x ? 18 : 0), `${name}: size`);
  });
}

test('GIF frames decoded by an independent decoder (omggif) are the source, dithered', async () => {
  for (const [name, input, mean] of [['photo', photo, 4], ['pixel art', pixelArt, 0.01], ['grey', grey, 2]] as const) {
    const gif = decodeGifFrames(await convert(input, 'gif'));
    const source = await decode(input);
    assert.is(gif.frames.length, 1);
    const d = difference(gif.frames[0]!.data, source.data);
    assert.ok(d.mean <= mean, `${name}: mean ${d.mean.toFixed(3)}, max ${d.max}`);
  }
  // A soft edge becomes a hard one at alpha 128; transparent pixels stay transparent.
  const cut = decodeGifFrames(await convert(cutout, 'gif')).frames[0]!;
  const source = await decode(cutout);
  for (let i = 3; i < source.data.length; i += 4) assert.is(cut.data[i], source.data[i]! >= 128 ? 255 : 0, `alpha at ${i >> 2}`);
});

test('animation metadata: frame count, delays and loop are the input\'s, in GIF and WebP', async () => {
  const gif = decodeGifFrames(await convert(moving, 'gif'));
  assert.is(gif.frames.length, 5);
  assert.equal(gif.frames.map((f) => f.delayMs), [40, 30, 150, 10, 70]);
  assert.is(gif.loop, 3);
  assert.is(decodeGifFrames(await convert(twice, 'gif')).loop, 1);
  assert.is(decodeGifFrames(await convert(once, 'gif')).loop, null, 'played once: no loop extension');

  const webp = chunks(await convert(moving, 'webp'));
  const frames = webp.filter((c) => c.type === 'ANMF');
  assert.is(frames.length, 5);
  // ANMF: x, y, width - 1, height - 1, duration (24-bit each), flags. A delay of 10 ms or less
  // shows for 100 ms (webpsave's rule); WebP counts plays, GIF repeats.
  assert.equal(frames.map((f) => f.body.readUIntLE(12, 3)), [40, 30, 150, 100, 70]);
  assert.is(webp.find((c) => c.type === 'ANIM')!.body.readUInt16LE(4), 4);
});

test('an animation whose frames are all the same, looped, to WebP: the still image libwebp makes of it (a fuzzer find: was a 500)', async () => {
  const same = makeGif(40, 30, [[0, 0, 0], [0, 0, 0], [0, 0, 0]], { delays: [50, 50, 50], repeat: 2, frameFn: () => (x, y) => [x * 6, y * 8, 90] });
  const webp = await convert(same, 'webp');
  const types = chunks(webp).map((c) => c.type);
  assert.not.ok(types.includes('ANIM'), 'identical frames are merged into one still image');
  assert.ok(types.includes('VP8 ') || types.includes('VP8L') || types.includes('VP8X'));
});

test('an animation with alpha: the hole stays transparent in every GIF frame', async () => {
  const gif = decodeGifFrames(await convert(holes, 'gif'));
  assert.is(gif.frames.length, 6);
  gif.frames.forEach((frame, i) => {
    const at = (24 * frame.width + 10 + i * 8) * 4;  // the hole's centre
    assert.is(frame.data[at + 3], 0, `frame ${i} hole`);
    assert.is(frame.data[(2 * frame.width + 90) * 4 + 3], 255, `frame ${i} corner`);
  });
});

test.run();
