// run-tests: parallel
// Sizes derived from the input (resize geometry, the decoded size) are computed without overflow
// and checked before they narrow: a thin, tall image must not wrap around to a small result, and
// a layout with many wide samples is counted by its decoded bytes, not only its pixels.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, MatteError } from '../../lib/index.js';
import { floatTiff, greyPng } from '../helpers/crafted.js';
import { decode } from '../helpers/images.js';

async function refusal(promise: Promise<unknown>): Promise<MatteError> {
  try {
    await promise;
  } catch (err) {
    assert.instance(err, MatteError);
    return err as MatteError;
  }
  assert.unreachable('the job succeeded');
  throw new Error('unreachable');
}

const tall = greyPng(1, 4_194_305); // 4.2 MP, within the default limits

test('1 x 4194305 resized to width 1024: the true height (4.3e9) is refused by the 10000-px rule', async () => {
  const err = await refusal(edit(tall, [{ resize: { width: 1024 } }]));
  assert.is(err.code, 'invalid_operations');
  assert.is(err.path, 'operations[0].resize');
  assert.match(err.message, /1024x4294968320/);
});

test('cover (which enlarges) refuses the overflowing scaled side too, with one or two sides given', async () => {
  // Only refusals here: actually resizing a 1-pixel-wide, 4-million-row image is slow in libvips.
  for (const op of [
    { resize: { width: 1024, fit: 'cover' as const } },
    { resize: { width: 1024, height: 1024, fit: 'cover' as const } },
  ]) {
    const err = await refusal(edit(tall, [op]));
    assert.is(err.code, 'invalid_operations', `${JSON.stringify(op)}: ${err.message}`);
    assert.is(err.path, 'operations[0].resize');
  }
});

test('3000x3000 TIFF with 16 float32 samples per pixel: refused by its decoded size (576 MB > 4 bytes x the pixel limit)', async () => {
  const tiff = floatTiff(3000, 3000, 16);
  assert.ok(tiff.length < 1_000_000, `${tiff.length} bytes`);
  const err = await refusal(edit(tiff, [{ flip: 'h' }]));
  assert.is(err.code, 'image_too_large', err.message);
  assert.match(err.message, /576000000 bytes/);
});

test('the decoded-size bound follows maxPixels: the same TIFF passes the check when the limit allows it', async () => {
  const tiff = floatTiff(64, 64, 16); // 1 MB decoded: far below 4 x 100 MP
  const out = await edit(tiff, [{ flip: 'h' }]).catch((e: MatteError) => e);
  // Whatever libvips makes of 16 float samples, it is not the size check that refuses it.
  if (out instanceof MatteError) assert.is.not(out.code, 'image_too_large', out.message);
  const small = await refusal(edit(tiff, [{ flip: 'h' }], { limits: { maxPixels: 64 * 64 * 16 - 1 } }));
  assert.is(small.code, 'image_too_large');
});

test('8-bit RGBA at exactly the pixel limit still passes the decoded-size check', async () => {
  const png = greyPng(100, 100);
  const out = await edit(png, [{ flip: 'h' }], { limits: { maxPixels: 100 * 100 } });
  assert.is(out.width, 100);
});

test.run();
