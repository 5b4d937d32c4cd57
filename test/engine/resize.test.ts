// run-tests: parallel
// resize: exact output sizes of every fit mode, with one and two dimensions, enlarging and
// shrinking (docs/api.md, "Operations (edit)"), the centre crop of cover/crop, and shrink-on-load.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit } from '../../lib/index.js';
import { convert, decode, gradient, pixel, channelMeans, solid, withExifOrientation } from '../helpers/images.js';

const source = gradient(400, 200); // landscape 2:1, red follows x, green follows y

type Case = [string, { width?: number; height?: number; fit?: string }, [number, number]];
const cases: Case[] = [
  ['contain shrinks to fit', { width: 100, height: 100, fit: 'contain' }, [100, 50]],
  ['contain enlarges to fit', { width: 1000, height: 1000, fit: 'contain' }, [1000, 500]],
  ['contain is the default fit', { width: 100, height: 100 }, [100, 50]],
  ['contain limited by height', { width: 1000, height: 100, fit: 'contain' }, [200, 100]],
  ['scale-down shrinks', { width: 100, height: 100, fit: 'scale-down' }, [100, 50]],
  ['scale-down never enlarges', { width: 1000, height: 1000, fit: 'scale-down' }, [400, 200]],
  ['cover fills exactly (shrinking)', { width: 100, height: 100, fit: 'cover' }, [100, 100]],
  ['cover fills exactly (enlarging)', { width: 1000, height: 1000, fit: 'cover' }, [1000, 1000]],
  ['cover with a wide box', { width: 400, height: 50, fit: 'cover' }, [400, 50]],
  ['crop scales by the larger ratio then crops', { width: 100, height: 100, fit: 'crop' }, [100, 100]],
  ['crop never enlarges', { width: 1000, height: 1000, fit: 'crop' }, [400, 200]],
  ['crop with one side larger than the image', { width: 500, height: 100, fit: 'crop' }, [400, 100]],
  ['crop 300x100: s = 0.75 -> 300x150 -> 300x100', { width: 300, height: 100, fit: 'crop' }, [300, 100]],
  ['width only follows the aspect ratio', { width: 100 }, [100, 50]],
  ['height only follows the aspect ratio', { height: 50 }, [100, 50]],
  ['width only enlarges with contain', { width: 800 }, [800, 400]],
  ['width only enlarges with cover', { width: 800, fit: 'cover' }, [800, 400]],
  ['width only: scale-down never enlarges', { width: 800, fit: 'scale-down' }, [400, 200]],
  ['height only: crop never enlarges', { height: 800, fit: 'crop' }, [400, 200]],
  ['width only: crop shrinks like contain', { width: 200, fit: 'crop' }, [200, 100]],
  ['a 1-pixel result side stays at least 1', { width: 1, fit: 'contain' }, [1, 1]],
];

for (const [name, resize, [w, h]] of cases) {
  test(`resize ${name}: ${JSON.stringify(resize)} -> ${w}x${h}`, async () => {
    const out = await edit(source, [{ resize } as any]);
    assert.is(out.width, w);
    assert.is(out.height, h);
    const image = await decode(out.data);
    assert.is(image.width, w);
    assert.is(image.height, h);
  });
}

test('cover keeps the centre', async () => {
  // 400x200 -> 100x100: scaled to 200x100, then 50 px cut on each side.
  const image = await decode((await edit(source, [{ resize: { width: 100, height: 100, fit: 'cover' } }])).data);
  const left = pixel(image, 0, 50)[0];
  const right = pixel(image, 99, 50)[0];
  assert.ok(Math.abs(left - 64) <= 4, `left edge red ${left} ~ original x=100`);
  assert.ok(Math.abs(right - 191) <= 4, `right edge red ${right} ~ original x=299`);
});

test('crop keeps the centre: 500x100 of 400x200 keeps rows 50..149', async () => {
  const image = await decode((await edit(source, [{ resize: { width: 500, height: 100, fit: 'crop' } }])).data);
  assert.ok(Math.abs(pixel(image, 0, 0)[1] - 64) <= 3, `top row green ${pixel(image, 0, 0)[1]} ~ original y=50`);
});

test('shrink-on-load: a large JPEG gives the exact size, and the same picture as without it', async () => {
  const png = gradient(4001, 3000);
  const jpeg = await convert(png, 'jpeg', { quality: 95 });
  const fromJpeg = await edit(jpeg, [{ resize: { width: 800 } }]);
  const fromPng = await edit(png, [{ resize: { width: 800 } }]);
  assert.is(fromJpeg.width, 800);
  assert.is(fromJpeg.height, 600); // round(3000 * 800 / 4001) = 600, from the stored size
  assert.is(fromPng.height, 600);
  const a = channelMeans(await decode(fromJpeg.data));
  const b = channelMeans(await decode(fromPng.data));
  for (let c = 0; c < 3; c++) assert.ok(Math.abs(a[c]! - b[c]!) < 2, `channel ${c}: ${a[c]} vs ${b[c]}`);
});

test('shrink-on-load with cover and an EXIF-rotated JPEG', async () => {
  const jpeg = withExifOrientation(await convert(gradient(2000, 1000), 'jpeg'), 6); // shown as 1000x2000
  const out = await edit(jpeg, [{ resize: { width: 100, height: 100, fit: 'cover' } }]);
  assert.is(out.width, 100);
  assert.is(out.height, 100);
  const contain = await edit(jpeg, [{ resize: { width: 250 } }]);
  assert.is(contain.width, 250);
  assert.is(contain.height, 500);
});

test('resize keeps transparency without dark fringes (premultiplied)', async () => {
  const { makePng } = await import('../helpers/images.js');
  // Left half opaque white, right half fully transparent black.
  const input = makePng(40, 10, (x) => (x < 20 ? [255, 255, 255, 255] : [0, 0, 0, 0]));
  const image = await decode((await edit(input, [{ resize: { width: 15 } }])).data);
  for (let x = 0; x < image.width; x++) {
    const p = pixel(image, x, 2);
    if (p[3] > 16) assert.ok(p[0] >= 240, `x=${x}: colour ${p} must stay white where visible`);
  }
});

test('a reduction past a million (1000001x1 to 1 pixel wide, 1x3000000 to 1 high) gives the image\'s colour', async () => {
  // libvips 8.14's reduce refuses more than 1e6 in one pass: this was a 500 (internal).
  for (const [width, height, box] of [[1_000_001, 1, { width: 1 }], [1, 3_000_000, { height: 1 }]] as const) {
    const out = await edit(solid(width, height, [200, 100, 50, 128], { alpha: true }), [{ resize: box }], { format: 'png' });
    const decoded = await decode(out.data);
    assert.equal([decoded.width, decoded.height], [1, 1]);
    assert.equal(pixel(decoded, 0, 0), [200, 100, 50, 128]);
  }
});

test('a resize whose result would be larger than 10000 on a side is refused before any pixel work', async () => {
  const tall = gradient(1, 200);
  try {
    await edit(tall, [{ flip: 'h' }, { resize: { width: 100 } }]); // 100 x 20000
    assert.unreachable();
  } catch (err: any) {
    assert.is(err.code, 'invalid_operations');
    assert.is(err.path, 'operations[1].resize');
    assert.match(err.message, /100x20000/);
  }
});

test('a resize above the pixel limit is refused', async () => {
  try {
    await edit(gradient(10, 10), [{ resize: { width: 10000, height: 10000, fit: 'cover' } }], { limits: { maxPixels: 1_000_000 } });
    assert.unreachable();
  } catch (err: any) {
    assert.is(err.code, 'invalid_operations');
    assert.is(err.path, 'operations[0].resize');
  }
});

test.run();
