// run-tests: parallel
// Output formats (by magic bytes), quality, alpha handling per format, and what loading does to
// colour and metadata: EXIF orientation applied, no metadata out, sRGB, 8-bit.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, OUTPUT_FORMATS, MEDIA_TYPES } from '../../lib/index.js';
import { convert, decode, disc, distance, formatOf, gradient, makePng, makeTiff, pixel, solid, withExifOrientation, withPngChunk } from '../helpers/images.js';

const photo = gradient(120, 80);

for (const format of OUTPUT_FORMATS) {
  test(`${format} output: magic bytes, media type, size`, async () => {
    const out = await edit(photo, [{ flip: 'h' }], { format });
    assert.is(formatOf(out.data), format);
    assert.is(out.format, format);
    assert.is(out.mediaType, MEDIA_TYPES[format]);
    assert.equal([out.width, out.height, out.frames], [120, 80, 1]);
    const image = await decode(out.data);
    assert.equal([image.width, image.height], [120, 80]);
  });
}

test('png is the default format', async () => {
  assert.is(formatOf((await edit(photo, [{ flip: 'h' }])).data), 'png');
});

test('quality changes jpeg and webp size; default is 80', async () => {
  const noisy = makePng(200, 200, (x, y) => [(x * 37 + y * 91) % 256, (x * 13 + y * 7) % 256, (x * y) % 256], { alpha: false });
  for (const format of ['jpeg', 'webp'] as const) {
    const low = await edit(noisy, [{ flip: 'h' }], { format, quality: 10 });
    const high = await edit(noisy, [{ flip: 'h' }], { format, quality: 95 });
    const byDefault = await edit(noisy, [{ flip: 'h' }], { format });
    const q80 = await edit(noisy, [{ flip: 'h' }], { format, quality: 80 });
    assert.ok(low.data.length < high.data.length, `${format}: q10 ${low.data.length} < q95 ${high.data.length}`);
    assert.is(byDefault.data.length, q80.data.length, `${format}: default is 80`);
  }
});

test('quality is accepted and ignored for png and gif', async () => {
  for (const format of ['png', 'gif'] as const) {
    const a = await edit(photo, [{ flip: 'h' }], { format, quality: 5 });
    const b = await edit(photo, [{ flip: 'h' }], { format, quality: 100 });
    assert.ok(a.data.equals(b.data), format);
  }
});

test('invalid options are refused', async () => {
  for (const options of [{ format: 'bmp' }, { quality: 0 }, { quality: 101 }, { quality: 50.5 }, { anim: 'yes' }, { colour: 1 }]) {
    try {
      await edit(photo, [{ flip: 'h' }], options as any);
      assert.unreachable(JSON.stringify(options));
    } catch (err: any) {
      assert.is(err.code, 'invalid_option', JSON.stringify(options));
    }
  }
});

const cutout = disc(40, 40, 10, [255, 0, 0, 255], [0, 0, 0, 0]);

test('jpeg output of an image with alpha is flattened on white', async () => {
  const image = await decode((await edit(cutout, [{ flip: 'h' }], { format: 'jpeg' })).data);
  assert.ok(distance(pixel(image, 0, 0), [255, 255, 255, 255]) <= 2, `corner ${pixel(image, 0, 0)}`);
  assert.ok(distance(pixel(image, 20, 20), [255, 0, 0, 255]) <= 20, `centre ${pixel(image, 20, 20)}`); // chroma subsampling
});

test('png and webp keep alpha; gif keeps 1-bit alpha; avif keeps alpha', async () => {
  for (const format of ['png', 'webp', 'gif', 'avif'] as const) {
    const image = await decode((await edit(cutout, [{ flip: 'h' }], { format })).data);
    assert.is(pixel(image, 0, 0)[3], 0, `${format} corner transparent`);
    assert.ok(pixel(image, 20, 20)[3] >= 250, `${format} centre opaque`);
  }
});

test('every accepted input type decodes: jpeg, png, webp, gif, avif, tiff', async () => {
  const inputs: Record<string, Buffer> = {
    jpeg: await convert(photo, 'jpeg'),
    png: photo,
    webp: await convert(photo, 'webp'),
    gif: await convert(photo, 'gif'),
    avif: await convert(photo, 'avif'),
    tiff: makeTiff(120, 80, [10, 200, 30]),
  };
  for (const [type, input] of Object.entries(inputs)) {
    const out = await edit(input, [{ rotate: 90 }]);
    assert.equal([out.width, out.height], [80, 120], type);
  }
  const tiff = await decode((await edit(inputs.tiff!, [{ flip: 'h' }])).data);
  assert.equal(pixel(tiff, 5, 5), [10, 200, 30, 255]);
});

test('a multi-page TIFF gives its first page', async () => {
  const tiff = makeTiff(20, 10, [200, 10, 10], { pages: [[10, 200, 10], [10, 10, 200]] });
  for (const format of ['png', 'webp', 'gif'] as const) {
    const out = await edit(tiff, [{ flip: 'h' }], { format });
    assert.equal([out.width, out.height, out.frames], [20, 10, 1], format);
    assert.ok(distance(pixel(await decode(out.data), 3, 3), [200, 10, 10, 255]) <= 12, format);
  }
});

test('EXIF orientation is applied at load, and no EXIF is written', async () => {
  const jpeg = await convert(makePng(40, 20, (x) => (x < 20 ? [255, 0, 0] : [0, 0, 255]), { alpha: false }), 'jpeg', { quality: 95 });
  for (const [orientation, size, topLeftRed] of [
    [1, [40, 20], true],
    [3, [40, 20], false],
    [6, [20, 40], true], // rotate 90 cw: the left (red) half goes to the top
    [8, [20, 40], false],
  ] as const) {
    const out = await edit(withExifOrientation(jpeg, orientation), [{ flip: 'v' }, { flip: 'v' }], { format: 'jpeg' });
    assert.equal([out.width, out.height], size, `orientation ${orientation}`);
    assert.is(out.data.includes(Buffer.from('Exif\0\0', 'latin1')), false, 'no EXIF in the output');
    const p = pixel(await decode(out.data), 2, 2);
    assert.is(p[0] > p[2], topLeftRed, `orientation ${orientation}: top-left ${p}`);
  }
});

test('grey, grey+alpha and 16-bit inputs come out as 8-bit sRGB', async () => {
  const { PNG } = await import('pngjs');
  const grey = new PNG({ width: 4, height: 4, colorType: 0, bitDepth: 16, inputHasAlpha: false } as any);
  grey.data.fill(200);
  const png16 = PNG.sync.write(grey, { colorType: 0, bitDepth: 16 } as any);
  const out = await edit(png16, [{ flip: 'h' }]);
  const image = await decode(out.data);
  assert.is(out.data[24], 8, 'bit depth 8');
  assert.is(pixel(image, 0, 0)[0], pixel(image, 0, 0)[1], 'grey stays grey');
  const greyAlpha = makePng(4, 4, () => [90, 90, 90, 100]);
  const ga = await decode((await edit(greyAlpha, [{ background: 'red' }])).data);
  assert.ok(pixel(ga, 0, 0)[0] > pixel(ga, 0, 0)[1], 'a colour background applies to a grey image');
});

test('an unusable embedded ICC profile is ignored', async () => {
  const png = solid(8, 8, [10, 120, 230], { alpha: false });
  const zlib = await import('node:zlib');
  const broken = withPngChunk(png, 'iCCP', Buffer.concat([Buffer.from('bogus\0\0', 'latin1'), zlib.deflateSync(Buffer.from('not an icc profile at all'))]));
  const image = await decode((await edit(broken, [{ flip: 'h' }])).data);
  assert.equal(pixel(image, 1, 1), [10, 120, 230, 255]);
});

test('a file path works as input', async () => {
  const { writeFile, mkdtemp } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const path = join(await mkdtemp(join(tmpdir(), 'matte-')), 'in.png');
  await writeFile(path, photo);
  const out = await edit(path, [{ resize: { width: 60 } }]);
  assert.equal([out.width, out.height], [60, 40]);
  try {
    await edit(path + '.missing', [{ flip: 'h' }]);
    assert.unreachable();
  } catch (err: any) {
    assert.is(err.code, 'invalid_input');
  }
});

test.run();
