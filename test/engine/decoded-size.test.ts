// run-tests: parallel
// Declared size = decoded size (docs/api.md, "Input"): a file whose header declares a small image
// while its data makes the decoder allocate far more is refused before decoding, or the larger
// size is what the limits hold. Each hostile file is built in code (test/helpers/declared-small.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { addon } from '../../lib/native.js';
import { edit, MatteError, type EditOptions } from '../../lib/index.js';
import { declareSmaller, gifWithFrames, heicWithForeignParameterSets, jpegInTiff, tiledTiff, withoutIspe } from '../helpers/declared-small.js';
import { encodeHeic } from '../helpers/heic.js';
import { convert, decode, gradient, makeGif, solid } from '../helpers/images.js';

const counters = (addon as unknown as { counters: () => { trackedBytes: number } }).counters;

/** The job's error code and message; fails the test when the job succeeds. */
async function refusal(input: Buffer, options: EditOptions = {}): Promise<{ code: string; message: string }> {
  try {
    await edit(input, [{ flip: 'h' }], options);
  } catch (err) {
    assert.instance(err, MatteError, String(err));
    return { code: (err as MatteError).code, message: (err as MatteError).message };
  }
  throw new Error('the image was accepted');
}

/** Runs `job` and returns the most libvips tracked while it ran (sampled between turns of the loop). */
async function peakTracked(job: () => Promise<unknown>): Promise<number> {
  let peak = counters().trackedBytes;
  let done = false;
  const running = job().finally(() => (done = true));
  while (!done) {
    peak = Math.max(peak, counters().trackedBytes);
    await new Promise((r) => setImmediate(r));
  }
  await running.catch(() => undefined);
  return Math.max(peak, counters().trackedBytes);
}

test('a 1x1 TIFF with a 9984x9984 tile is refused before decoding', async () => {
  const bomb = tiledTiff({ width: 1, height: 1, tileWidth: 9984, tileHeight: 9984 });
  assert.ok(bomb.length < 200_000, `${bomb.length} bytes`);
  const before = counters().trackedBytes;
  let outcome: { code: string; message: string } | undefined;
  const peak = await peakTracked(async () => (outcome = await refusal(bomb)));
  assert.is(outcome!.code, 'unsupported_image', outcome!.message);
  assert.match(outcome!.message, /tiles \(9984x9984\) are far larger than the image \(1x1\)/);
  assert.ok(peak - before < 16 * 1024 * 1024, `libvips tracked ${peak - before} bytes more`);
});

test('a 1x1 TIFF with a 9984x9984 tile of 16 float samples is refused before decoding', async () => {
  const bomb = tiledTiff({ width: 1, height: 1, tileWidth: 9984, tileHeight: 9984, samples: 16, float: true });
  const before = counters().trackedBytes;
  let outcome: { code: string; message: string } | undefined;
  const peak = await peakTracked(async () => (outcome = await refusal(bomb)));
  assert.is(outcome!.code, 'unsupported_image', outcome!.message);
  assert.ok(peak - before < 16 * 1024 * 1024, `libvips tracked ${peak - before} bytes more`);
});

test('a 1x1 TIFF whose 1024x1024 tile of 16 float samples passes the byte limit is refused as too large', async () => {
  // 1024 x 1024 x 64 bytes = 64 MiB decoded for one pixel: counted against maxPixels x 4 bytes.
  const tiff = tiledTiff({ width: 1, height: 1, tileWidth: 1024, tileHeight: 1024, samples: 16, float: true });
  const { code, message } = await refusal(tiff, { limits: { maxPixels: 10_000_000 } });
  assert.is(code, 'image_too_large', message);
  assert.match(message, /tiles or strips decode 1024x1024 pixels for a 1x1 image/);
});

test('ordinary tiled TIFFs still decode: a 10x10 image in one 128x128 tile, a 300x200 image in 256x256 tiles', async () => {
  for (const [width, height, tile] of [[10, 10, 128], [300, 200, 256]] as const) {
    const out = await edit(tiledTiff({ width, height, tileWidth: tile, tileHeight: tile }), [{ flip: 'h' }]);
    assert.is(out.width, width);
    assert.is(out.height, height);
  }
});

test('a TIFF strip holding a JPEG larger than the strip is refused before decoding', async () => {
  const jpeg = await convert(gradient(512, 512), 'jpeg');
  const { code, message } = await refusal(jpegInTiff(jpeg, 8, 8));
  assert.is(code, 'unsupported_image', message);
  assert.match(message, /holds a 512x512 JPEG in a 8x8 strip/);
});

test('a GIF whose frames pass its 1x1 logical screen is held to the limits at the frames\' size', async () => {
  // libnsgif grows the screen to the first frame, which libvips then reports.
  const first = await refusal(gifWithFrames([1, 1], [[9000, 9000]]), { limits: { maxPixels: 1_000_000 } });
  assert.is(first.code, 'image_too_large', first.message);
  assert.match(first.message, /9000x9000 pixels/);
  // A later frame does not grow it: the box all frames reach is what the limits hold.
  const later = await refusal(gifWithFrames([1, 1], [[1, 1], [9000, 9000]]), { limits: { maxPixels: 1_000_000 } });
  assert.is(later.code, 'image_too_large', later.message);
  assert.match(later.message, /frames reach 9000x9000 pixels for a 1x1 image/);
});

test('a WebP whose canvas declares 1x1 around a 512x512 bitstream is refused before decoding', async () => {
  const webp = await convert(solid(512, 512, [10, 20, 30, 128], { alpha: true }), 'webp');
  const lying = declareSmaller(webp, 1, 1)!;
  assert.ok(lying, 'the WebP has a VP8X canvas to patch');
  const { code, message } = await refusal(lying);
  assert.is(code, 'unsupported_image', message);
  assert.match(message, /webp image/);
});

test('an animated WebP whose frames declare 2x2 around 64x64 bitstreams is refused before decoding', async () => {
  const gif = makeGif(64, 64, [[255, 0, 0], [0, 0, 255]]);
  const anim = await edit(gif, [{ flip: 'h' }], { format: 'webp', anim: true });
  assert.is(anim.frames, 2);
  const { code, message } = await refusal(declareSmaller(anim.data, 2, 2)!, { anim: true, format: 'webp' });
  assert.is(code, 'unsupported_image', message);
});

test('an AVIF whose ispe declares 8x8 around a 256x192 AV1 frame is refused before decoding', async () => {
  const avif = await convert(gradient(256, 192), 'avif');
  const lying = declareSmaller(avif, 8, 8)!;
  const { code, message } = await refusal(lying);
  assert.is(code, 'unsupported_image', message);
  assert.match(message, /coded size differs from its declared size \(ispe\)/);
});

test('AVIFs of even and odd sizes, with and without alpha, still decode at their size', async () => {
  for (const [width, height, alpha] of [[256, 192, false], [63, 41, true], [1, 1, false]] as const) {
    const input = alpha ? solid(width, height, [1, 2, 3, 100], { alpha: true }) : gradient(width, height);
    const out = await edit(await convert(input, 'avif'), [{ flip: 'h' }], { format: 'png' });
    const decoded = await decode(out.data);
    assert.equal([decoded.width, decoded.height], [width, height]);
  }
});

test('a HEIC whose ispe declares 8x8 around a 256x192 HEVC picture is refused before decoding', async () => {
  const lying = declareSmaller(encodeHeic(gradient(256, 192)), 8, 8)!;
  const { code, message } = await refusal(lying);
  assert.is(code, 'unsupported_image', message);
  assert.match(message, /coded size differs from its declared size \(ispe\)/);
});

test('a HEIC declaring 128x96 (ispe and hvcC) whose data carries the parameter sets of a 1024x768 picture is refused', async () => {
  // libheif 1.15 decodes this file at 1024x768: libde265 takes the last SPS it is given.
  const lying = heicWithForeignParameterSets(encodeHeic(gradient(128, 96)), encodeHeic(gradient(1024, 768)));
  const { code, message } = await refusal(lying);
  assert.is(code, 'unsupported_image', message);
  assert.match(message, /coded size differs from its declared size \(ispe\)/);
  // The same construction with the file's own parameter sets in its data decodes.
  const own = encodeHeic(gradient(128, 96));
  assert.equal((await edit(heicWithForeignParameterSets(own, own), [{ flip: 'h' }])).width, 128);
});

test('a HEIC grid tile without an ispe is refused (libheif 1.15 decodes it at its stream\'s size)', async () => {
  const grid = encodeHeic(gradient(16, 12)); // a grid of one 64x64 tile, item 1
  assert.is((await edit(grid, [{ flip: 'h' }])).width, 16);
  const { code, message } = await refusal(withoutIspe(grid, 1));
  assert.is(code, 'unsupported_image', message);
  assert.match(message, /without a declared size \(ispe\)/);
});

test('HEICs of even, odd and tiny sizes, with and without alpha, still decode at their size', async () => {
  // Inside: coded sizes padded by x265 to its 8-pixel blocks (500x333 is coded 504x336), even sizes
  // cropped by clap (127x129), and grids of a 64x64 tile below 64x64.
  for (const [width, height, alpha] of [[500, 333, false], [127, 129, false], [63, 41, true], [1, 1, false], [1000, 10, false]] as const) {
    const input = alpha ? solid(width, height, [1, 2, 3, 100], { alpha: true }) : gradient(width, height);
    const out = await edit(encodeHeic(input), [{ flip: 'h' }], { format: 'png' });
    const decoded = await decode(out.data);
    assert.equal([decoded.width, decoded.height], [width, height]);
  }
});

test('a PNG or JPEG declaring a smaller size decodes only the size it declares', async () => {
  for (const input of [gradient(512, 512), await convert(gradient(512, 512), 'jpeg')]) {
    const lying = declareSmaller(input, 4, 4)!;
    const out = await edit(lying, [{ flip: 'h' }]).catch((err: MatteError) => err);
    if (out instanceof MatteError) assert.is(out.code, 'unsupported_image', out.message);
    else assert.equal([out.width, out.height], [4, 4]);
  }
});

test('a progressive 4:4:4 JPEG is held to the limits at its coefficient buffer, a baseline one at its pixels', async () => {
  // 1000x1000 at quality 95 (4:4:4): 3 MB of pixels, 6 MB of coefficients when libjpeg buffers them.
  const baseline = await convert(gradient(1000, 1000), 'jpeg', { quality: 95 });
  const limits = { maxPixels: 1_200_000 };
  assert.is((await edit(baseline, [{ flip: 'h' }], { limits })).width, 1000);
  const sof = baseline.indexOf(Buffer.from([0xff, 0xc0]));
  const progressive = Buffer.from(baseline);
  progressive[sof + 1] = 0xc2; // the same frame, declared progressive
  const { code, message } = await refusal(progressive, { limits });
  assert.is(code, 'image_too_large', message);
  assert.match(message, /progressive jpeg image holds 6000000 bytes of coefficients/);
});

test('every cut of these files is a typed refusal or a result, never internal', async () => {
  const files = [
    tiledTiff({ width: 1, height: 1, tileWidth: 2048, tileHeight: 2048 }),
    jpegInTiff(await convert(gradient(64, 64), 'jpeg'), 8, 8),
    gifWithFrames([1, 1], [[1, 1], [300, 300]]),
    declareSmaller(await convert(solid(64, 64, [10, 20, 30, 128], { alpha: true }), 'webp'), 1, 1)!,
    declareSmaller(await convert(gradient(64, 48), 'avif'), 8, 8)!,
    declareSmaller(encodeHeic(gradient(64, 48)), 8, 8)!,
    heicWithForeignParameterSets(encodeHeic(gradient(64, 64)), encodeHeic(gradient(256, 192))),
  ];
  for (const file of files) {
    for (let i = 1; i <= 24; i++) {
      const cut = file.subarray(0, Math.floor((file.length * i) / 25));
      const outcome = await edit(cut, [{ flip: 'h' }]).then(() => 'ok', (err: MatteError) => err.code);
      assert.ok(['ok', 'unsupported_image', 'image_too_large'].includes(outcome), `${cut.length} bytes: ${outcome}`);
    }
  }
});

test.run();
