// run-tests: alone (each budget is set from a duration it measured)
// The job budget holds through the GIF and animated WebP encodes, through the server as a process
// on loopback with the real addon (issue 23). libvips 8.14's gifsave hands a whole frame to
// libimagequant and cgif, and its webpsave each frame to WebPAnimEncoder, with no progress hook: a
// 6000x6000 result to GIF with a 12-s budget was answered 200 after 29.9 s, and a client that left
// did not stop it. matte's own encoders (native/encode/gif.cc, webp_anim.cc) poll the budget inside
// libimagequant and libwebp and between frames.
//
// Each budget is set past the time all of the job's pixels take (a JPEG of one frame of the same
// result, computed and quickly encoded, times the frames: matte's old animated WebP path computed
// every frame before encoding), so that it runs out inside the encode, which takes several times
// longer. Time bounds are generous: they show that the encode was stopped, not how fast.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rm } from 'node:fs/promises';
import { edit, type Operation } from '../../lib/index.js';
import { gradient, makeGif } from '../helpers/images.js';
import { form, get, post, sleep, spawnServer, tempDir, TEST_KEY, waitForJobs, type ChildServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/** How late past its budget a job may end: one uninterruptible stretch (a frame's LZW, a histogram) on a shared machine. */
const SLACK_MS = 4000;
/** How soon after its client leaves a stopped job frees its slot. */
const FREED_MS = 5000;

// A still GIF: 64 MP, quantised, dithered and LZW-coded as one frame.
const still = gradient(512, 512);
const STILL_GIF: Operation[] = [{ resize: { width: 8000, height: 8000, fit: 'cover' } }];
// An animated WebP of two 6000x6000 frames: matte's old path computed both, then libvips' saver
// encoded them with nothing to stop it.
const twoFrames = makeGif(64, 64, [[0, 0, 0], [0, 0, 0]], { frameFn: (i) => (x, y) => [(x * 4 + i * 90) & 255, (y * 4) & 255, 128] });
const LARGE_FRAMES: Operation[] = [{ resize: { width: 6000, height: 6000, fit: 'cover' } }];

let dir: string;

/** Seconds of budget: 1.5 times what computing the result's `frames` takes here, at least 2. */
async function budgetPast(input: Buffer, operations: Operation[], frames: number): Promise<{ seconds: number; computeMs: number }> {
  const started = performance.now();
  await edit(input, operations, { format: 'jpeg', timeout: 0, anim: false });
  const computeMs = (performance.now() - started) * frames;
  return { seconds: Math.max(2, Math.ceil((computeMs * 1.5) / 1000)), computeMs };
}

async function withServer(env: Record<string, string>, fn: (server: ChildServer) => Promise<void>): Promise<void> {
  const server = await spawnServer({ MATTE_API_KEYS: TEST_KEY, MATTE_RESULTS_DIR: dir, MATTE_CONCURRENCY: '1', ...env });
  try {
    await fn(server);
  } finally {
    await server.stop('SIGTERM');
  }
}

async function idle(base: string): Promise<boolean> {
  const jobs = (await get(base, '/readyz')).json().jobs;
  return jobs.running === 0 && jobs.waiting === 0;
}

test.before(async () => {
  dir = await tempDir('matte-encode-budget-');
});
test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

for (const [what, input, operations, format, frames] of [
  ['an 8000x8000 GIF', still, STILL_GIF, 'gif', 1],
  ['an animated WebP of two 6000x6000 frames', twoFrames, LARGE_FRAMES, 'webp', 2],
] as const) {
  test(`${what} past MATTE_JOB_TIMEOUT_SECONDS: 422 job_timeout soon after the budget, and the next job runs`, async () => {
    const { seconds } = await budgetPast(input, [...operations], frames);
    await withServer({ MATTE_JOB_TIMEOUT_SECONDS: String(seconds) }, async (server) => {
      const started = Date.now();
      const r = await post(server.url, '/images/edit', { input, operations: JSON.stringify(operations), format, output: 'raw' });
      const ms = Date.now() - started;
      assert.is(r.status, 422, `${r.status} after ${ms} ms: ${r.body.length} bytes`);
      assert.equal(r.json(), { error: { code: 'job_timeout', message: `the job took longer than ${seconds} s and was stopped` } });
      assert.ok(ms < seconds * 1000 + SLACK_MS, `answered after ${ms} ms with a budget of ${seconds} s`);
      assert.ok(await idle(server.url), 'the slot is free');
      const ok = await post(server.url, '/images/edit', { input: gradient(64, 64), operations: '[{"flip":"h"}]', format, output: 'raw' });
      assert.is(ok.status, 200);
    });
  });

  test(`${what}: a client that leaves mid-encode stops it, and its slot is free within ${FREED_MS / 1000} s`, async () => {
    const { computeMs } = await budgetPast(input, [...operations], frames);
    await withServer({ MATTE_JOB_TIMEOUT_SECONDS: '3600' }, async (server) => {
      const fields = { input, operations: JSON.stringify(operations), format, output: 'raw' };
      // The whole job once, to know when its encode runs: the pixels are its first fifth or so.
      const started = Date.now();
      assert.is((await post(server.url, '/images/edit', fields)).status, 200);
      const jobMs = Date.now() - started;
      const controller = new AbortController();
      const request = fetch(`${server.url}/images/edit`, { method: 'POST', headers: { 'X-Api-Key': TEST_KEY }, body: form(fields), signal: controller.signal }).catch((err: Error) => err);
      await waitForJobs(server.url, 1);
      // Stands for the job's work: past its pixels, well before its end.
      await sleep(Math.max(computeMs * 1.5, jobMs * 0.4));
      controller.abort();
      assert.instance(await request, Error, `the job ended before its client left (${jobMs} ms a job)`);
      const left = Date.now();
      await waitFor('the stopped job to free its slot', () => idle(server.url), { timeoutMs: FREED_MS });
      assert.ok(Date.now() - left < FREED_MS);
    });
  });
}

test.run();
