// run-tests: parallel
// Each output format stores sides up to a limit (WebP 16383, JPEG 65500, GIF 65535, AVIF 65536);
// a result past it is refused as image_too_large (413) before encoding, never an encoder's 500.
// Found by test/stress/error-isolation-stress.ts: a corrupt GIF whose screen became 60x37929, to WebP.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, MatteError } from '../../lib/index.js';
import { decode, gradient } from '../helpers/images.js';

async function refused(input: Buffer, format: 'webp' | 'jpeg' | 'gif' | 'avif'): Promise<string> {
  try {
    await edit(input, [{ brightness: 1.1 }], { format });
  } catch (err) {
    assert.instance(err, MatteError);
    assert.is((err as MatteError).code, 'image_too_large', (err as MatteError).message);
    return (err as MatteError).message;
  }
  throw new Error(`${format} succeeded`);
}

test('WebP: 16383 pixels on a side is encoded, 16384 is refused (tall and wide)', async () => {
  const ok = await edit(gradient(3, 16383), [{ brightness: 1.1 }], { format: 'webp' });
  assert.is(ok.height, 16383);
  assert.is((await decode(ok.data)).height, 16383);
  assert.match(await refused(gradient(3, 16384), 'webp'), /3x16384 pixels, and WebP images are at most 16383/);
  assert.match(await refused(gradient(16384, 3), 'webp'), /16384x3/);
});

test('JPEG past 65500, GIF past 65535 and AVIF past 65536 pixels on a side are refused', async () => {
  const jpeg = await edit(gradient(2, 65500), [{ brightness: 1.1 }], { format: 'jpeg' });
  assert.is(jpeg.height, 65500);
  assert.match(await refused(gradient(2, 65501), 'jpeg'), /JPEG images are at most 65500/);
  assert.match(await refused(gradient(2, 65536), 'gif'), /GIF images are at most 65535/);
  assert.match(await refused(gradient(65537, 2), 'avif'), /AVIF images are at most 65536/);
});

test('a resize into the limit makes the same image encodable', async () => {
  const out = await edit(gradient(3, 20000), [{ resize: { height: 10000 } }], { format: 'webp' });
  assert.is(out.height, 10000);
});

test.run();
