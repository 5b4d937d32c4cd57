// run-tests: parallel
// A JPEG turned by its EXIF orientation cannot be decoded top to bottom (the turn reads the rows
// out of order): with steps that otherwise stream (brightness, resize), a phone photo of 1000 px
// or more failed with unsupported_image. native/load.cc decodes such an image into memory first.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit } from '../../lib/index.js';
import { convert, decode, makePng, pixel, withExifOrientation } from '../helpers/images.js';

const W = 1600;
const H = 1200;
// Red in the top-left quarter, blue elsewhere: where it lands shows the turn.
const stored = makePng(W, H, (x, y) => (x < W / 2 && y < H / 2 ? [220, 20, 20] : [20, 20, 220]), { alpha: false });

test('orientation 6 through streaming steps: decoded, turned 90 degrees clockwise', async () => {
  const jpeg = withExifOrientation(await convert(stored, 'jpeg', { quality: 95 }), 6);
  for (const operations of [[{ brightness: 1.0 }], [{ resize: { width: 600 } }], [{ contrast: 1.0 }, { saturation: 1.0 }]]) {
    const out = await decode((await edit(jpeg, operations, { format: 'png' })).data);
    const scale = out.width / H;
    assert.is(out.width, Math.round(H * scale));
    assert.is(out.height, Math.round(W * scale));
    // Turned clockwise, the stored top-left quarter is at the top right.
    const [r, , b] = pixel(out, out.width - Math.round(10 * scale) - 1, Math.round(10 * scale));
    assert.ok(r > 150 && b < 100, `top right is ${r},${b}, not red (${JSON.stringify(operations)})`);
    const [r2, , b2] = pixel(out, Math.round(10 * scale), Math.round(10 * scale));
    assert.ok(b2 > 150 && r2 < 100, `top left is ${r2},${b2}, not blue`);
  }
});

test.run();
