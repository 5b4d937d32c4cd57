// run-tests: parallel
// place (docs/api.md, "Extensions: staged cut-outs"): the subject's box scaled to a share of the
// room's limiting side and placed at a percentage of the free space, the canvas padded to an
// aspect ratio, a margin kept free; the box measured in the result within a pixel.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, MatteError, type PlaceValue } from '../../lib/index.js';
import { alphaBox, type Box } from '../helpers/alpha-box.js';
import { decode, makePng, pixel } from '../helpers/images.js';

// A 40x40 square subject (its box at 30,30) on a transparent 200x100 canvas.
const subject = makePng(200, 100, (x, y) => (x >= 30 && x < 70 && y >= 30 && y < 70 ? [200, 40, 40, 255] : [0, 0, 0, 0]));

async function placed(place: PlaceValue, input = subject) {
  const out = await edit(input, [{ place }]);
  const image = await decode(out.data);
  return { width: out.width, height: out.height, box: alphaBox(image)!, image };
}

function near(actual: Box, expected: Box, what: string) {
  for (const key of ['left', 'top', 'width', 'height'] as const)
    assert.ok(Math.abs(actual[key] - expected[key]) <= 1, `${what}: ${key} ${actual[key]}, expected ${expected[key]} (${JSON.stringify(actual)})`);
}

test('scale: the box takes that share of the canvas\'s limiting side, centred', async () => {
  // Limiting side: the height (100 / 40 < 200 / 40); 50% of it is 50 pixels.
  const { width, height, box } = await placed({ scale: 50 });
  assert.equal([width, height], [200, 100], 'the canvas keeps its size');
  near(box, { left: 75, top: 25, width: 50, height: 50 }, 'scale 50');
  const full = await placed({ scale: 100 });
  near(full.box, { left: 50, top: 0, width: 100, height: 100 }, 'scale 100');
});

test('position: x% and y% of the free space; original keeps the box\'s centre', async () => {
  const corner = await placed({ scale: 30, position: { x: 0, y: 100 } });
  near(corner.box, { left: 0, top: 70, width: 30, height: 30 }, 'bottom-left');
  const right = await placed({ scale: 30, position: { x: 100, y: 0 } });
  near(right.box, { left: 170, top: 0, width: 30, height: 30 }, 'top-right');
  const quarter = await placed({ position: { x: 25, y: 50 } });
  near(quarter.box, { left: 40, top: 30, width: 40, height: 40 }, 'moved, not scaled');
  const original = await placed({ scale: 50, position: 'original' });
  near(original.box, { left: 25, top: 25, width: 50, height: 50 }, 'scaled about its centre');
  // Scaled about its centre, it would pass the top-left edge: moved back inside.
  const clamped = await placed({ scale: 90, position: 'original' });
  near(clamped.box, { left: 5, top: 5, width: 90, height: 90 }, 'kept inside');
});

test('aspectRatio pads the canvas (never crops); margin keeps room free at the edges', async () => {
  const square = await placed({ aspectRatio: '1:1', scale: 80 });
  assert.equal([square.width, square.height], [200, 200]);
  near(square.box, { left: 20, top: 20, width: 160, height: 160 }, 'square, 80%');
  const padded = await placed({ aspectRatio: '1:1' });
  near(padded.box, { left: 30, top: 80, width: 40, height: 40 }, 'padded, the subject where it was in the old canvas');
  const tall = await placed({ aspectRatio: '1:2' });
  assert.equal([tall.width, tall.height], [200, 400]);
  // 10%: 20 pixels left and right, 10 above and below; the room 160x80, the subject 2x.
  const margin = await placed({ scale: 100, margin: '10%' });
  near(margin.box, { left: 60, top: 10, width: 80, height: 80 }, 'margin 10%');
  const pixels = await placed({ margin: 40 });
  near(pixels.box, { left: 40, top: 40, width: 20, height: 20 }, 'shrunk to fit inside a 40 px margin');
});

test('an image without alpha is its own subject: padded to a square around it', async () => {
  const photo = makePng(120, 60, (x) => [x * 2, 100, 50], { alpha: false });
  const { width, height, box, image } = await placed({ aspectRatio: '1:1', scale: 100 }, photo);
  assert.equal([width, height], [120, 120]);
  near(box, { left: 0, top: 30, width: 120, height: 60 }, 'the photo centred');
  assert.equal(pixel(image, 60, 5), [0, 0, 0, 0]);
});

test('bad values are refused at their path: a scale of 0% or 150%, a margin that leaves no room', async () => {
  for (const [place, path] of [[{ scale: 0 }, 'operations[0].place.scale'], [{ scale: 150 }, 'operations[0].place.scale'], [{ aspectRatio: '3' }, 'operations[0].place.aspectRatio'], [{ margin: '50%' }, 'operations[0].place.margin'], [{}, 'operations[0].place']] as const) {
    try {
      await edit(subject, [{ place: place as PlaceValue }]);
      assert.unreachable(JSON.stringify(place));
    } catch (err) {
      assert.instance(err, MatteError);
      assert.is((err as MatteError).code, 'invalid_operations');
      assert.is((err as MatteError).path, path);
    }
  }
  try {
    await edit(makePng(30, 30, () => [1, 2, 3, 255]), [{ place: { margin: 15 } }]);
    assert.unreachable();
  } catch (err) {
    assert.is((err as MatteError).path, 'operations[0].place');
    assert.match((err as MatteError).message, /margin leaves no room/);
  }
});

test.run();
