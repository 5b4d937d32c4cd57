// run-tests: parallel
// Hostile and broken inputs (docs/api.md, "Input"): each is refused with its typed code, never a crash.
// Types are recognised by content; loaders outside the allow-list never run; limits are checked
// from the header and the file's own structure before decoding.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import zlib from 'node:zlib';
import { edit } from '../../lib/index.js';
import { convert, gradient, makeGif, makePng, makeTiff } from '../helpers/images.js';

async function refused(input: Buffer, code: string, message?: RegExp, options: Parameters<typeof edit>[2] = {}) {
  try {
    await edit(input, [{ flip: 'h' }], options);
  } catch (err: any) {
    assert.is(err.code, code, `${err.code}: ${err.message}`);
    if (message) assert.match(err.message, message);
    return;
  }
  assert.unreachable(`accepted (expected ${code})`);
}

/** A valid PNG signature + IHDR claiming any size, with a tiny IDAT. */
function pngHeader(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(Buffer.alloc(100))), chunk('IEND', Buffer.alloc(0))]);
}

const png = gradient(64, 48);

test('an empty input', () => refused(Buffer.alloc(0), 'unsupported_image', /empty/));
test('random bytes', () => refused(Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 251)), 'unsupported_image'));
test('text', () => refused(Buffer.from('hello, world'), 'unsupported_image'));

test('SVG is refused (untrusted loader, not in the allow-list)', () =>
  refused(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'), 'unsupported_image'));
test('PDF is refused', () => refused(Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF'), 'unsupported_image'));
test('the matrix text format is refused (not marked untrusted by libvips 8.14)', () => refused(Buffer.from('2 2\n1 2\n3 4\n'), 'unsupported_image'));
test('PPM is refused', () => refused(Buffer.from('P6\n2 2\n255\n' + 'x'.repeat(12), 'latin1'), 'unsupported_image'));
test('BMP is refused', () => refused(Buffer.concat([Buffer.from('BM', 'latin1'), Buffer.alloc(60)]), 'unsupported_image'));

test('a truncated PNG', () => refused(png.subarray(0, Math.floor(png.length / 2)), 'unsupported_image'));
test('a PNG cut inside its header', () => refused(png.subarray(0, 20), 'unsupported_image'));

test('a truncated JPEG', async () => {
  const jpeg = await convert(gradient(300, 200), 'jpeg');
  await refused(jpeg.subarray(0, Math.floor(jpeg.length / 2)), 'unsupported_image');
  await refused(jpeg.subarray(0, 10), 'unsupported_image');
});

test('a truncated WebP and GIF', async () => {
  const webp = await convert(gradient(300, 200), 'webp');
  await refused(webp.subarray(0, Math.floor(webp.length / 2)), 'unsupported_image');
  await refused(Buffer.from('GIF89a', 'latin1'), 'unsupported_image');
});

test('a TIFF whose strip lies past the end of the file (libvips would decode black)', () =>
  refused(makeTiff(16, 16, [200, 100, 50], { stripOffset: 100000 }), 'unsupported_image', /truncated/));

test('a PNG header claiming 60000x60000 is refused from the header, before decoding', async () => {
  const started = process.hrtime.bigint();
  await refused(pngHeader(60000, 60000), 'image_too_large', /60000x60000/);
  // Not a timing assertion of speed, a proof that nothing was decoded: 3.6 G pixels would take minutes.
  assert.ok(Number(process.hrtime.bigint() - started) / 1e9 < 5);
});

test('the pixel limit is configurable', async () => {
  await refused(png, 'image_too_large', /limit/, { limits: { maxPixels: 1000 } });
  const ok = await edit(png, [{ flip: 'h' }], { limits: { maxPixels: 64 * 48 } });
  assert.is(ok.width, 64);
});

test('a GIF with more frames than the limit, counted from the file (not the decoder)', async () => {
  const frames = Array.from({ length: 12 }, (_, i) => [i * 20, 0, 0] as [number, number, number]);
  await refused(makeGif(2, 2, frames), 'image_too_large', /12 frames/, { format: 'gif', limits: { maxFrames: 10 } });
});

test('frames past 4096 are counted too (Debian libvips 8.14 stops counting there)', async () => {
  const frames = Array.from({ length: 5000 }, (_, i) => [i % 256, 0, 0] as [number, number, number]);
  await refused(makeGif(1, 1, frames), 'image_too_large', /5000 frames/, { format: 'gif', limits: { maxFrames: 4500 } });
});

test('garbage after a valid image is tolerated; garbage before it is not', async () => {
  const withTail = Buffer.concat([png, Buffer.from('trailing junk')]);
  assert.is((await edit(withTail, [{ flip: 'h' }])).width, 64);
  await refused(Buffer.concat([Buffer.from('junk'), png]), 'unsupported_image');
});

test('a PNG with a corrupt IDAT', async () => {
  const copy = Buffer.from(makePng(64, 64, (x, y) => [x * 4, y * 4, 0], { alpha: false }));
  const idat = copy.indexOf(Buffer.from('IDAT', 'latin1'));
  for (let i = idat + 10; i < idat + 60; i++) copy[i] = 0xff;
  await refused(copy, 'unsupported_image');
});

test('the process survives a burst of bad inputs in parallel', async () => {
  const bad = [Buffer.alloc(0), Buffer.from('x'), png.subarray(0, 100), pngHeader(60000, 60000), makeTiff(8, 8, [1, 2, 3], { stripOffset: 9999 })];
  const results = await Promise.allSettled(Array.from({ length: 25 }, (_, i) => edit(bad[i % bad.length]!, [{ blur: 1 }])));
  assert.ok(results.every((r) => r.status === 'rejected'));
  assert.is((await edit(png, [{ flip: 'h' }])).width, 64, 'still working');
});

test('a non-buffer input is refused', async () => {
  try {
    await edit(42 as any, [{ flip: 'h' }]);
    assert.unreachable();
  } catch (err: any) {
    assert.is(err.code, 'invalid_input');
  }
});

test.run();
