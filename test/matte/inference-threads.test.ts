// run-tests: parallel
// Where an inference runs (native/matte/model.cc): every run, of a job alone or of jobs that share
// the cores, takes its turn in ONNX Runtime's one process-wide pool, in the model's one session.
// The matte must not depend on the threads a job has: the same bytes alone, capped at one thread,
// or beside other jobs.
import { availableParallelism } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { configure, loadModel, removeBackground } from '../../lib/index.js';
import { addon } from '../../lib/native.js';
import { decode, disc, gradient } from '../helpers/images.js';

const counters = (addon as unknown as { counters: () => { inferencesPooled: number } }).counters;
const RED: [number, number, number] = [200, 30, 30];
const WHITE: [number, number, number] = [255, 255, 255];
const subject = disc(320, 240, 70, RED, WHITE, { alpha: false });
const busy = gradient(300, 200);

test.before(async () => {
  // The model first, as a library user may do: the pool is then sized from the cores.
  await loadModel('u2netp');
  configure({ concurrency: 2 });
});

function counted<T>(fn: () => Promise<T>): Promise<{ result: T; pooled: number }> {
  const before = counters();
  return fn().then((result) => ({ result, pooled: counters().inferencesPooled - before.inferencesPooled }));
}

test('a job alone and a job capped at one thread both run in the shared pool: the same bytes', async () => {
  for (const [image, refine] of [[subject, false], [subject, true], [busy, false]] as const) {
    configure({ concurrency: 2 });
    // The refined disc is a small subject: a second inference on its crop (second-pass.test.ts).
    const runs = refine && image === subject ? 2 : 1;
    const alone = await counted(() => removeBackground(image, { refine }));
    assert.is(alone.pooled, runs, 'a lone job runs in the pool');
    // Cap every job at one thread: the job's share is 1, as when every core has a job.
    configure({ concurrency: 2, threads: 1 });
    const crowded = await counted(() => removeBackground(image, { refine }));
    assert.is(crowded.pooled, runs, 'a job with a share of one thread runs in the pool too');
    assert.ok(crowded.result.data.equals(alone.result.data), `refine ${refine}: the matte differs with one thread`);
  }
  configure({ concurrency: 2 });
});

test('as many jobs as cores at once: every run in the pool, each with the matte of a job alone', async () => {
  configure({ concurrency: 2 });
  const alone = await removeBackground(subject, { refine: false });
  const jobs = Math.max(2, availableParallelism());
  const together = await counted(() => Promise.all(Array.from({ length: jobs }, () => removeBackground(subject, { refine: false }))));
  assert.is(together.pooled, jobs);
  for (const out of together.result) {
    const decoded = await decode(out.data);
    assert.is(decoded.width, 320);
    assert.ok(out.data.equals(alone.data), 'a matte made beside others differs from the one made alone');
  }
});

test('a job capped at one thread is still stopped by its signal and its deadline', async () => {
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
