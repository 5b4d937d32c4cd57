// run-tests: parallel
// What the schema and the library accept is exactly what the addon accepts: every bound lib/
// holds (tone factors, limits, decoded bytes per pixel) is tried on the addon's own surface just
// inside and just outside, so the two cannot drift apart. And a malformed value is always a
// MatteError with a path, never a TypeError.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { addon, type NativePlan } from '../../lib/native.js';
import {
  DECODED_BYTES_PER_PIXEL,
  DEFAULT_LIMITS,
  edit,
  LIMIT_BOUNDS,
  MatteError,
  MAX_BLUR,
  MAX_QUALITY,
  MAX_RESIZE_SIDE,
  MAX_TONE_FACTOR,
  MAX_TRIM_MARGIN_PERCENT,
  MAX_TRIM_MARGIN_PIXELS,
  MIN_QUALITY,
  parseOperations,
} from '../../lib/index.js';
import { floatTiff } from '../helpers/crafted.js';
import { solid } from '../helpers/images.js';

const image = solid(8, 8, [10, 20, 30]);
const plan = (over: Partial<NativePlan>): NativePlan => ({ steps: [], format: 'png', quality: 80, anim: true, ...DEFAULT_LIMITS, ...over });
/** 'ok', or the code the addon refused the job with ('internal' for a plan out of its bounds). */
const outcome = (p: NativePlan, input = image) => addon.run(input, p, undefined).then(() => 'ok', (e: { code: string }) => e.code);
const accepted = async (p: NativePlan, input = image) => (await outcome(p, input)) === 'ok';

test('tone factors: the addon accepts MAX_TONE_FACTOR and refuses just above it, like the schema', async () => {
  for (const op of ['brightness', 'contrast', 'saturation'] as const) {
    assert.ok(await accepted(plan({ steps: [{ op, value: MAX_TONE_FACTOR }] })), `${op} ${MAX_TONE_FACTOR}`);
    assert.not.ok(await accepted(plan({ steps: [{ op, value: MAX_TONE_FACTOR + 0.5 }] })), `${op} above`);
    assert.equal(parseOperations([{ [op]: MAX_TONE_FACTOR }]), [{ op, value: MAX_TONE_FACTOR }]);
    try {
      parseOperations([{ [op]: MAX_TONE_FACTOR + 0.5 }]);
      assert.unreachable(`${op} above the bound passed the schema`);
    } catch (err) {
      assert.instance(err, MatteError);
      assert.is((err as MatteError).path, `operations[0].${op}`);
    }
  }
});

test('{"brightness":2e9} is invalid_operations with the path (not internal)', async () => {
  for (const op of ['brightness', 'contrast', 'saturation']) {
    try {
      await edit(image, [{ [op]: 2e9 }]);
      assert.unreachable('accepted');
    } catch (err) {
      assert.instance(err, MatteError);
      assert.is((err as MatteError).code, 'invalid_operations');
      assert.is((err as MatteError).path, `operations[0].${op}`);
    }
  }
});

test('limits: the addon accepts each bound and refuses just outside it, like the library', async () => {
  for (const key of Object.keys(LIMIT_BOUNDS) as Array<keyof typeof LIMIT_BOUNDS>) {
    const { min, max } = LIMIT_BOUNDS[key];
    assert.ok(await accepted(plan({ [key]: max })), `${key}=${max}`);
    assert.is.not(await outcome(plan({ [key]: min })), 'internal', `${key}=${min}`); // may be too small for the image, not out of bounds
    assert.not.ok(await accepted(plan({ [key]: max + 1 })), `${key}=${max + 1}`);
    assert.not.ok(await accepted(plan({ [key]: min - 1 })), `${key}=${min - 1}`);
    for (const bad of [min - 1, max + 1, 1.5, Number.NaN]) {
      try {
        await edit(image, [{ flip: 'h' }], { limits: { [key]: bad } });
        assert.unreachable(`limits.${key}=${bad} accepted`);
      } catch (err) {
        assert.instance(err, MatteError);
        assert.is((err as MatteError).code, 'invalid_option', `${key}=${bad}: ${(err as Error).message}`);
        assert.is((err as MatteError).path, `limits.${key}`);
      }
    }
  }
});

test('resize side, blur radius, trim margins, quality: the addon accepts each bound and refuses just outside it', async () => {
  // A small pixel limit: a resize to the largest side is refused for its size (invalid_operations), not for its field.
  const small = { maxPixels: 1000 };
  const cases: Array<[string, (v: number) => Partial<NativePlan>, number, number]> = [
    ['resize width', (v) => ({ ...small, steps: [{ op: 'resize', width: v, fit: 'contain' }] }), 1, MAX_RESIZE_SIDE],
    ['resize height', (v) => ({ ...small, steps: [{ op: 'resize', height: v, fit: 'contain' }] }), 1, MAX_RESIZE_SIDE],
    ['blur radius', (v) => ({ steps: [{ op: 'blur', radius: v }] }), 0, MAX_BLUR],
    ['trim margin pixels', (v) => ({ steps: [{ op: 'trimTransparent', marginPixels: v }] }), 0, MAX_TRIM_MARGIN_PIXELS],
    ['trim margin percent', (v) => ({ steps: [{ op: 'trimTransparent', marginPercent: v }] }), 0, MAX_TRIM_MARGIN_PERCENT],
    ['quality', (v) => ({ format: 'jpeg', quality: v }), MIN_QUALITY, MAX_QUALITY],
  ];
  for (const [what, at, min, max] of cases) {
    for (const v of [min, max]) assert.is.not(await outcome(plan(at(v))), 'internal', `${what} ${v}`);
    for (const v of [min - 1, max + 1]) assert.is(await outcome(plan(at(v))), 'internal', `${what} ${v}`);
  }
});

test('decoded bytes per pixel: the addon holds decoded bytes to DECODED_BYTES_PER_PIXEL x maxPixels', async () => {
  // 10x10 with 2 float32 samples: 100 pixels, 800 bytes decoded.
  const tiff = floatTiff(10, 10, 2);
  const bytes = 10 * 10 * 2 * 4;
  assert.is.not(await outcome(plan({ maxPixels: bytes / DECODED_BYTES_PER_PIXEL }), tiff), 'image_too_large');
  assert.is(await outcome(plan({ maxPixels: bytes / DECODED_BYTES_PER_PIXEL - 1 }), tiff), 'image_too_large');
});

test('malformed colours are invalid_operations with the path, never a TypeError', async () => {
  for (const colour of ['rgb(1x)', 'rgb(1x 2 3)', 'hsl(1x 2% 3%)', 'hwb(x 1% 1%)', 'rgba(1,2,3,x)', 'rgb(', 'rgb(1 2 3 / 4x)']) {
    try {
      await edit(image, [{ flip: 'h' }, { background: colour }]);
      assert.unreachable(`${colour} accepted`);
    } catch (err) {
      assert.instance(err, MatteError, `${colour}: ${err}`);
      assert.is((err as MatteError).code, 'invalid_operations');
      assert.is((err as MatteError).path, 'operations[1].background');
    }
  }
});

test.run();
