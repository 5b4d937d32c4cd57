// run-tests: alone (/healthz must answer within 500 ms during its image work)
// Capacity (docs/api.md, "Capacity and shutdown"): with MATTE_CONCURRENCY=1 and MATTE_QUEUE_LIMIT=1, a burst
// of slow jobs larger than the queue gets 503 overloaded with Retry-After; the event loop stays
// free meanwhile; the server recovers. Also the JobLimiter itself.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { JobLimiter } from '../../server/jobs.js';
import { gradient } from '../helpers/images.js';
import { bodyOf, get, post, rawRequest, sleep, startTestServer, statusOf, TEST_KEY, waitForJobs, type TestServer } from '../helpers/server.js';

let server: TestServer;
const input = gradient(64, 48);
/** About 0.5-1 s of libvips work on this machine: a 3000 x 3000 upscale and a wide blur. */
const SLOW = JSON.stringify([{ resize: { width: 3000, height: 3000, fit: 'cover' } }, { blur: 40 }]);

test.before(async () => {
  server = await startTestServer({ MATTE_CONCURRENCY: '1', MATTE_QUEUE_LIMIT: '1' });
});
test.after(async () => {
  await server.close();
});

test('a burst of 4 slow jobs with 1 running and 1 queued: 2 succeed, 2 get 503 overloaded with Retry-After', async () => {
  const burst = Array.from({ length: 4 }, () => post(server.url, '/images/edit', { input, operations: SLOW, format: 'jpeg', output: 'raw' }));
  // while the jobs run, the event loop answers at once
  await waitForJobs(server.url, 1);
  const started = Date.now();
  const health = await get(server.url, '/healthz');
  const healthMs = Date.now() - started;
  assert.is(health.status, 200);
  assert.ok(healthMs < 500, `healthz took ${healthMs} ms during image work`);

  const replies = await Promise.all(burst);
  const statuses = replies.map((r) => r.status).sort();
  assert.equal(statuses, [200, 200, 503, 503], statuses.join(','));
  for (const r of replies.filter((r) => r.status === 503)) {
    assert.is(r.json().error.code, 'overloaded');
    assert.match(r.headers.get('retry-after') ?? '', /^\d+$/);
  }
  // recovered
  const after = await post(server.url, '/images/edit', { input, operations: '[{"flip":"h"}]', output: 'raw' });
  assert.is(after.status, 200);
});

test('when the queue is already full, a new request is refused before its body is read', async () => {
  const running = [post(server.url, '/images/edit', { input, operations: SLOW, format: 'jpeg', output: 'raw' }), post(server.url, '/images/edit', { input, operations: SLOW, format: 'jpeg', output: 'raw' })];
  await waitForJobs(server.url, 1, 1);
  // answered within the 800 ms window without sending any body byte
  const { text } = await rawRequest(server.port, [`POST /images/edit HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${TEST_KEY}\r\nContent-Type: multipart/form-data; boundary=q\r\nContent-Length: 20000000\r\n\r\n`], { waitMs: 800 });
  assert.is(statusOf(text), 503, text);
  assert.is(bodyOf(text).error.code, 'overloaded');
  assert.match(text, /Retry-After: \d+/);
  const statuses = (await Promise.all(running)).map((r) => r.status);
  assert.equal(statuses, [200, 200]);
});

test('JobLimiter: admits concurrency + queueLimit requests, refuses beyond, runs at most `concurrency` jobs in order', async () => {
  const limiter = new JobLimiter(2, 2);
  const admissions = [1, 2, 3, 4].map(() => limiter.admit());
  assert.ok(limiter.full());
  assert.throws(() => limiter.admit(), (e: any) => e.status === 503 && e.code === 'overloaded' && e.headers['Retry-After']);
  admissions[0]!();
  admissions[0]!(); // idempotent
  assert.not.ok(limiter.full());
  let active = 0;
  let peak = 0;
  const job = (n: number) => async () => {
    active++;
    peak = Math.max(peak, active);
    await sleep(30);
    active--;
    return n;
  };
  const runs = [1, 2, 3, 4].map((n) => limiter.run(job(n)));
  assert.equal(limiter.stats, { admitted: 3, running: 2, waiting: 2 });
  assert.equal(await Promise.all(runs), [1, 2, 3, 4]);
  assert.is(peak, 2);
  assert.equal(limiter.stats, { admitted: 3, running: 0, waiting: 0 });
});

test('JobLimiter: a queued job whose client went away leaves the queue', async () => {
  const limiter = new JobLimiter(1, 1);
  let release = () => {};
  const first = limiter.run(() => new Promise<void>((r) => (release = r)));
  const controller = new AbortController();
  const second = limiter.run(async () => 'ran', controller.signal);
  controller.abort();
  let code = '';
  await second.catch((e) => (code = e.code));
  assert.is(code, 'client_closed');
  assert.equal(limiter.stats, { admitted: 0, running: 1, waiting: 0 });
  release();
  await first;
  assert.equal(limiter.stats, { admitted: 0, running: 0, waiting: 0 });
});

test.run();
