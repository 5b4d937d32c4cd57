// run-tests: parallel
// A first resize of a photo with an EXIF orientation runs on the image as stored and turns its
// result (native/load.cc, steps/resize.cc). It must give what turning first gives: the same size,
// the same window (gravity, pad's placement) and the same orientation, its samples within the
// rounding between the resize's two passes. Turning first is asked for explicitly here with the
// rotate and flip steps (vips_autorot's table of the eight orientations).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, type Operation } from '../../lib/index.js';
import { convert, decode, makePng, pixel, solid, withExifOrientation } from '../helpers/images.js';

// Smooth enough that a resize's rounding stays small; a dark corner block and a bright stripe on
// the right make every turn and mirror tell apart.
const stored = await convert(
  makePng(640, 400, (x, y) => (x < 80 && y < 60 ? [20, 20, 160] : x > 600 ? [250, 250, 40] : [64 + (x >> 2), 40 + (y >> 2), 128])),
  'jpeg',
  { quality: 95 },
);

const TURN_FIRST: Record<number, Operation[]> = {
  1: [],
  2: [{ flip: 'h' }],
  3: [{ rotate: 180 }],
  4: [{ rotate: 180 }, { flip: 'h' }],
  5: [{ rotate: 90 }, { flip: 'h' }],
  6: [{ rotate: 90 }],
  7: [{ rotate: 270 }, { flip: 'h' }],
  8: [{ rotate: 270 }],
};

const RESIZES = [
  { width: 150 },
  { width: 120, height: 90, fit: 'cover', gravity: 'northeast' },
  { width: 100, height: 100, fit: 'cover', gravity: { x: 0.2, y: 0.8 } },
  { width: 130, height: 110, fit: 'pad', background: '#ff0000', gravity: 'west' },
  { width: 97, height: 143, fit: 'fill' },
] as const;

for (let orientation = 2; orientation <= 8; orientation++) {
  test(`orientation ${orientation}: a first resize gives what turning first gives`, async () => {
    const jpeg = withExifOrientation(stored, orientation);
    for (const resize of RESIZES) {
      const turned = await decode((await edit(jpeg, [{ resize }], { format: 'png' })).data);
      const first = await decode((await edit(stored, [...TURN_FIRST[orientation]!, { resize }], { format: 'png' })).data);
      const what = `${JSON.stringify(resize)}`;
      assert.is(`${turned.width}x${turned.height}`, `${first.width}x${first.height}`, what);
      // The passes' order differs (rows first where the upright resize did columns first): each
      // rounds and clips lanczos3's ringing between them, a few levels, more at a hard edge. A wrong
      // turn or window would put the corner block elsewhere: hundreds of levels, tens on average.
      let most = 0;
      let sum = 0;
      for (let i = 0; i < turned.data.length; i++) {
        const d = Math.abs(turned.data[i]! - first.data[i]!);
        most = Math.max(most, d);
        sum += d;
      }
      const mean = sum / turned.data.length;
      assert.ok(most <= 32 && mean <= 0.5, `${what}: samples up to ${most} levels (mean ${mean.toFixed(3)}) from turning first`);
    }
  });
}

test('an enlarging first resize still turns first (the same bytes)', async () => {
  const jpeg = withExifOrientation(stored, 6);
  const resize = { width: 900, height: 700, fit: 'cover' } as const;
  const turned = await edit(jpeg, [{ resize }], { format: 'png' });
  const first = await edit(stored, [{ rotate: 90 }, { resize }], { format: 'png' });
  assert.ok(turned.data.equals(first.data));
});

test('a background image with an EXIF orientation is turned', async () => {
  // The stored photo turned by orientation 6 is 400x640: its corner block lands top right, its
  // stripe along the bottom; a 40x64 canvas holds all of it.
  const backdrop = withExifOrientation(stored, 6);
  const out = await decode((await edit(solid(40, 64, [0, 0, 0, 0]), [{ backgroundImage: true }], { backgroundImage: backdrop, format: 'png' })).data);
  const [r, g, b] = pixel(out, 38, 3);
  assert.ok(b! > r! + 60 && b! > g! + 60, `top right ${r},${g},${b}: the corner block`);
  const [r2, g2, b2] = pixel(out, 20, 62);
  assert.ok(r2! > 200 && g2! > 200 && b2! < 120, `bottom ${r2},${g2},${b2}: the stripe`);
});

test.run();
