// run-tests: parallel
// shadow (docs/api.md, "Extensions: staged cut-outs"): a drop shadow's mass lies where its offset
// puts it, with the silhouette's mass times its opacity, and nowhere above the subject; a contact
// shadow lies at the subject's base; the subject's own pixels are untouched (the shadow is under
// it); the canvas grows where a drop shadow would be clipped.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, MatteError, type ShadowValue } from '../../lib/index.js';
import { alphaBox, alphaMass } from '../helpers/alpha-box.js';
import { decode, makePng, pixel } from '../helpers/images.js';

const RED = [200, 40, 40, 255] as const;
// A 40x40 subject at (60, 30) on a transparent 240x180 canvas.
const inside = (x: number, y: number, left = 60, top = 30) => x >= left && x < left + 40 && y >= top && y < top + 40;
const subject = makePng(240, 180, (x, y) => (inside(x, y) ? [...RED] : [0, 0, 0, 0]));

async function shadowed(shadow: ShadowValue, input = subject) {
  const out = await edit(input, [{ shadow }]);
  return { out, image: await decode(out.data) };
}

test('a drop shadow\'s mass is the silhouette\'s times its opacity, centred where its offset puts it', async () => {
  // Offset past the subject and its blur (sigma 5, drawn to 15 px): all of the shadow is visible.
  const { out, image } = await shadowed({ offsetX: 70, offsetY: 60, blur: 10, opacity: 0.5 });
  assert.equal([out.width, out.height], [240, 180], 'no clipping, no growth');
  const shadow = alphaMass(image, (x, y) => !inside(x, y));
  const expected = 40 * 40 * 255 * 0.5;
  assert.ok(Math.abs(shadow.mass - expected) / expected < 0.02, `mass ${shadow.mass}, expected ${expected}`);
  assert.ok(Math.abs(shadow.x - (80 + 70)) < 0.5 && Math.abs(shadow.y - (50 + 60)) < 0.5, `centre ${shadow.x}, ${shadow.y}`);
  // Nowhere above the subject, nor left of it.
  for (let y = 0; y < image.height; y++)
    for (let x = 0; x < image.width; x++)
      if (y < 30 || x < 60) assert.is(pixel(image, x, y)[3], 0, `alpha at ${x},${y}`);
  // The subject's pixels are its own: the shadow is under it.
  for (const [x, y] of [[60, 30], [99, 69], [80, 50]] as const) assert.equal(pixel(image, x, y), [...RED]);
  // Its colour: black by default.
  const p = pixel(image, 150, 110);
  assert.ok(p[3] > 60 && p[0] === 0 && p[1] === 0 && p[2] === 0, JSON.stringify(p));
});

test('the default drop shadow falls down and to the right, scaled with the subject', async () => {
  const { image } = await shadowed(true);
  const shadow = alphaMass(image, (x, y) => !inside(x, y));
  assert.ok(shadow.mass > 0);
  // Of the visible part, more lies right of and below the subject's centre than left and above.
  assert.ok(shadow.x > 80 && shadow.y > 50, `centre ${shadow.x}, ${shadow.y}`);
  for (const [x, y] of [[60, 30], [99, 69]] as const) assert.equal(pixel(image, x, y), [...RED]);
  // The same look at 4x the size: its reach scales with the subject.
  const big = makePng(960, 720, (x, y) => (inside(x, y, 240, 120) || (x >= 240 && x < 400 && y >= 120 && y < 280) ? [...RED] : [0, 0, 0, 0]));
  const scaled = await shadowed(true, big);
  const a = alphaBox(image)!, b = alphaBox(scaled.image)!;
  assert.ok(Math.abs(b.width - 4 * a.width) <= 6 && Math.abs(b.height - 4 * a.height) <= 6, `${JSON.stringify(a)} x4 vs ${JSON.stringify(b)}`);
});

test('the canvas grows where a drop shadow would be clipped, and only there', async () => {
  // The subject touches the bottom-right corner: sigma 5 drawn to 15 px past the offset of 20.
  const corner = makePng(100, 80, (x, y) => (x >= 60 && y >= 40 ? [...RED] : [0, 0, 0, 0]));
  const { out, image } = await shadowed({ offsetX: 20, offsetY: 20, blur: 10 }, corner);
  assert.equal([out.width, out.height], [135, 115]);
  assert.equal(pixel(image, 60, 40), [...RED], 'the subject stays where it was');
  assert.ok(pixel(image, 120, 100)[3] > 0, 'the shadow past the old edge');
  // Up and to the left: the canvas grows there, and the subject moves with the old canvas.
  const left = await shadowed({ offsetX: -70, offsetY: -40, blur: 4 });
  assert.equal([left.out.width, left.out.height], [240 + 16, 180 + 16]);
  assert.equal(pixel(left.image, 60 + 16, 30 + 16), [...RED]);
});

test('a contact shadow lies at the subject\'s base, centred under it', async () => {
  const { out, image } = await shadowed({ type: 'contact', opacity: 1 });
  assert.equal([out.width, out.height], [240, 180]);
  const shadow = alphaMass(image, (x, y) => !inside(x, y));
  assert.ok(shadow.mass > 0);
  assert.ok(Math.abs(shadow.x - 80) < 0.5, `centred: ${shadow.x}`);
  // Its band is 2 px (5% of 40), blurred by its height: within a few pixels of the base (y = 70).
  const box = alphaBox(image)!;
  assert.ok(box.top === 30, 'nothing above the subject');
  for (let y = 0; y < image.height; y++)
    for (let x = 0; x < image.width; x++) if (!inside(x, y) && pixel(image, x, y)[3] > 0) assert.ok(y >= 66 && y <= 76, `shadow at ${x},${y}`);
  const colour = await shadowed({ type: 'contact', color: 'rgb(0 0 255)' });
  assert.equal(pixel(colour.image, 80, 70).slice(0, 3), [0, 0, 255]);
});

test('an image without alpha casts the shadow of its rectangle; bad values and a canvas past the limit are refused', async () => {
  const photo = makePng(60, 40, (x) => [x * 4, 80, 120], { alpha: false });
  const { out, image } = await shadowed({ offsetX: 10, offsetY: 10, blur: 4 }, photo);
  assert.equal([out.width, out.height], [60 + 16, 40 + 16]);
  assert.equal(pixel(image, 0, 0), [0, 80, 120, 255]);
  assert.ok(pixel(image, 70, 50)[3] > 0);
  for (const [shadow, path] of [[{ opacity: 1.5 }, 'operations[0].shadow.opacity'], [{ blur: 251 }, 'operations[0].shadow.blur'], [{ offsetX: 3000 }, 'operations[0].shadow.offsetX'], [{ type: 'hard' }, 'operations[0].shadow']] as const) {
    try {
      await edit(subject, [{ shadow: shadow as ShadowValue }]);
      assert.unreachable(JSON.stringify(shadow));
    } catch (err) {
      assert.is((err as MatteError).code, 'invalid_operations');
      assert.is((err as MatteError).path, path);
    }
  }
  try {
    await edit(photo, [{ shadow: { offsetX: 2000, offsetY: 2000, blur: 250 } }], { limits: { maxPixels: 1_000_000 } });
    assert.unreachable();
  } catch (err) {
    assert.is((err as MatteError).code, 'image_too_large');
  }
});

test.run();
