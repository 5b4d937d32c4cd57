// run-tests: alone (each budget is set from a duration it measured)
// The job's budget holds while the result is encoded, not only while its pixels are computed:
// libvips 8.14 hands a whole still WebP to libwebp with no progress hook, so a large WebP encode
// ran to its end whatever the budget (a 6000x6000 result with a 12 s budget: 200 after 25 s).
// native/encode/webp.cc hooks libwebp's progress to the budget.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, MatteError, type Operation } from '../../lib/index.js';
import { decode, disc, distance, gradient, pixel } from '../helpers/images.js';

const input = gradient(512, 512);
const LARGE: Operation[] = [{ resize: { width: 6000, height: 6000, fit: 'cover' } }];
/** How late past its budget a job may end: the time between two of libwebp's progress calls, and a shared machine. */
const SLACK_MS = 4000;

test('a WebP encode of a large result stops within the job budget (job_timeout)', async () => {
  // The budget is set past the time the pixels take (a JPEG of the same result: computing it and a
  // fast encode), so the budget runs out inside the WebP encode, which takes several times longer.
  let started = performance.now();
  await edit(input, LARGE, { format: 'jpeg', timeout: 0 });
  const computeMs = performance.now() - started;
  const timeout = Math.max(2, Math.ceil((computeMs * 1.5) / 1000));
  started = performance.now();
  const outcome = await edit(input, LARGE, { format: 'webp', timeout }).then(() => 'ok', (err: MatteError) => err.code);
  const ms = performance.now() - started;
  assert.ok(ms < timeout * 1000 + SLACK_MS, `${outcome} after ${Math.round(ms)} ms with a budget of ${timeout} s`);
  assert.ok(outcome === 'job_timeout' || outcome === 'ok', outcome);
});

test('still WebP output: the same pixels, no metadata chunk, alpha kept', async () => {
  const out = await edit(gradient(300, 200), [{ flip: 'h' }], { format: 'webp', quality: 100 });
  assert.is(out.data.toString('latin1', 12, 16), 'VP8 '); // the simple format: no VP8X, no EXIF
  const decoded = await decode(out.data);
  assert.equal([decoded.width, decoded.height], [300, 200]);
  assert.ok(distance(pixel(decoded, 0, 0), pixel(await decode(gradient(300, 200)), 299, 0)) < 12);
  const cutout = await edit(disc(40, 30, 10, [200, 30, 30, 255], [0, 0, 0, 0], { alpha: true }), [{ flip: 'h' }], { format: 'webp' });
  const alpha = await decode(cutout.data);
  assert.is(pixel(alpha, 0, 0)[3], 0);
  assert.is(pixel(alpha, 20, 15)[3], 255);
});

test.run();
