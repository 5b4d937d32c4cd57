// run-tests: parallel
// Inferences share ONNX Runtime's one intra-op pool one at a time (native/matte/inference_gate.h):
// jobs started together all finish, each with the matte it gets alone, and a job waiting for the
// pool is still stopped by its signal and by its deadline.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { configure, loadModel, removeBackground } from '../../lib/index.js';
import { decode, disc } from '../helpers/images.js';

const RED: [number, number, number] = [200, 30, 30];
const WHITE: [number, number, number] = [255, 255, 255];
const image = disc(320, 240, 70, RED, WHITE, { alpha: false });

test.before(async () => {
  configure({ concurrency: 4 });
  await loadModel('u2netp');
});

function meanAlphaDifference(a: Uint8Array, b: Uint8Array): number {
  let sum = 0;
  for (let i = 3; i < a.length; i += 4) sum += Math.abs(a[i]! - b[i]!);
  return sum / (a.length / 4);
}

test('four jobs at once: each gets the matte of a job alone', async () => {
  const alone = await decode((await removeBackground(image, { refine: false })).data);
  const together = await Promise.all(Array.from({ length: 4 }, () => removeBackground(image, { refine: false })));
  for (const out of together) {
    const decoded = await decode(out.data);
    assert.is(decoded.width, 320);
    assert.is(decoded.height, 240);
    assert.ok(meanAlphaDifference(decoded.data, alone.data) < 0.5, 'a matte made beside others differs from the one made alone');
  }
});

test('jobs waiting for the pool are stopped by their signal; the running ones finish', async () => {
  const controllers = Array.from({ length: 4 }, () => new AbortController());
  const jobs = controllers.map((c) => removeBackground(image, { signal: c.signal }).then(() => 'done', (err: { code?: string }) => err.code));
  // The first job keeps running; the others are stopped wherever they are (a thread, the pool, the model).
  setTimeout(() => controllers.slice(1).forEach((c) => c.abort()), 20);
  const outcomes = await Promise.all(jobs);
  assert.is(outcomes[0], 'done');
  for (const outcome of outcomes.slice(1)) assert.ok(outcome === 'aborted' || outcome === 'done', `unexpected ${outcome}`);
});

test('a job waiting for the pool ends at its deadline', async () => {
  // Eight jobs with a 1 ms budget: none may hang or end in another error than job_timeout.
  const outcomes = await Promise.all(Array.from({ length: 8 }, () => removeBackground(image, { timeout: 0.001 }).then(() => 'done', (err: { code?: string }) => err.code)));
  for (const outcome of outcomes) assert.ok(outcome === 'job_timeout' || outcome === 'done', `unexpected ${outcome}`);
});

test.run();
