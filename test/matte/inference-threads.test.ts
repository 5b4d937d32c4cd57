// Where an inference runs (native/matte/model.cc): a job with more than one core's share runs in
// ONNX Runtime's shared pool, taking turns; while every core has a job (a share of one thread), a
// small model runs on the job's own thread in its one-thread session. The matte must not depend
// on which: the same bytes either way.
import { availableParallelism } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { configure, loadModel, removeBackground } from '../../lib/index.js';
import { addon } from '../../lib/native.js';
import { decode, disc, gradient } from '../helpers/images.js';

const counters = (addon as unknown as { counters: () => { inferencesPooled: number; inferencesOwnThread: number } }).counters;
const RED: [number, number, number] = [200, 30, 30];
const WHITE: [number, number, number] = [255, 255, 255];
const subject = disc(320, 240, 70, RED, WHITE, { alpha: false });
const busy = gradient(300, 200);
const multicore = availableParallelism() > 1;

test.before(async () => {
  // The model first, as a library user may do: the pool is then sized from the cores, and the
  // one-thread session must exist all the same.
  await loadModel('u2netp');
  configure({ concurrency: 2 });
});

function counted<T>(fn: () => Promise<T>): Promise<{ result: T; pooled: number; ownThread: number }> {
  const before = counters();
  return fn().then((result) => {
    const after = counters();
    return { result, pooled: after.inferencesPooled - before.inferencesPooled, ownThread: after.inferencesOwnThread - before.inferencesOwnThread };
  });
}

test('a job alone runs in the shared pool; with a share of one thread, on its own thread: the same bytes', async () => {
  for (const [image, refine] of [[subject, false], [subject, true], [busy, false]] as const) {
    configure({ concurrency: 2 });
    const alone = await counted(() => removeBackground(image, { refine }));
    assert.is(alone.pooled, 1, 'a lone job runs in the pool');
    assert.is(alone.ownThread, 0);
    // Cap every job at one thread: the job's share is 1, as when every core has a job.
    configure({ concurrency: 2, threads: 1 });
    const crowded = await counted(() => removeBackground(image, { refine }));
    assert.is(crowded.pooled + crowded.ownThread, 1);
    if (multicore) assert.is(crowded.ownThread, 1, 'a job with one thread runs on it');
    assert.ok(crowded.result.data.equals(alone.result.data), `refine ${refine}: the matte differs between the two sessions`);
  }
  configure({ concurrency: 2 });
});

test('as many jobs as cores at once: each on its own thread, each with the matte of a job alone', async () => {
  configure({ concurrency: 2 });
  const alone = await removeBackground(subject, { refine: false });
  const jobs = Math.max(2, availableParallelism());
  const together = await counted(() => Promise.all(Array.from({ length: jobs }, () => removeBackground(subject, { refine: false }))));
  assert.is(together.pooled + together.ownThread, jobs);
  // The first job may reach its model before the others have started (then it runs in the pool).
  if (multicore) assert.ok(together.ownThread >= 1, 'no job ran on its own thread');
  for (const out of together.result) {
    const decoded = await decode(out.data);
    assert.is(decoded.width, 320);
    assert.ok(out.data.equals(alone.data), 'a matte made beside others differs from the one made alone');
  }
});

test('a job on its own thread is still stopped by its signal and its deadline', async () => {
  configure({ concurrency: 2, threads: 1 });
  const controller = new AbortController();
  const stopped = removeBackground(subject, { signal: controller.signal }).then(() => 'done', (err: { code?: string }) => err.code);
  setTimeout(() => controller.abort(), 5);
  const outcome = await stopped;
  assert.ok(outcome === 'aborted' || outcome === 'done', `unexpected ${outcome}`);
  const late = await removeBackground(subject, { timeout: 0.001 }).then(() => 'done', (err: { code?: string }) => err.code);
  assert.ok(late === 'job_timeout' || late === 'done', `unexpected ${late}`);
  configure({ concurrency: 2 });
});

test.run();
