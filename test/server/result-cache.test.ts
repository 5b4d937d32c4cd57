// run-tests: alone (it compares the server CPU of a cache hit with a miss)
// The result cache of GET image URLs (server/result-cache.ts, server/cached-image.ts) through the
// real server on loopback, with an origin that counts what it is asked (test/helpers/origin.ts):
// a repeat is answered from the store with no job, and with no fetch of the source's body when
// the source has a validator (a conditional request, 304) or is still fresh (no request at all);
// If-None-Match is a 304 without a job; a changed source is a new answer; the cache is shared by
// processes on one results directory or one S3 bucket; its entry bound holds; a repeat's server CPU is a small
// share of the first request's; matte's own signed URLs use it too; MATTE_RESULT_CACHE_MAX_BYTES=0
// turns it off.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { signUrl } from '../../lib/index.js';
import { decode, gradient } from '../helpers/images.js';
import { brightnessModelEnv } from '../helpers/onnx.js';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestS3 } from '../helpers/s3.js';
import { get, scrapeMetrics, spawnServer, startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const KEY = 'signing-key-0123456789abcdef0123456789';
let origin: Origin;
let server: TestServer;

const env = (extra: Record<string, string> = {}) => ({
  MATTE_SOURCE_BASE: origin.url,
  MATTE_URL_SIGNING_KEYS: KEY,
  MATTE_ALLOW_PRIVATE_URLS: '1',
  MATTE_URL_PORTS: '*',
  MATTE_METRICS_ADDRESS: '127.0.0.1:0',
  ...extra,
});

test.before(async () => {
  origin = await startOrigin({
    '/etag.png': { body: gradient(96, 64), etag: '"v1"' },
    '/modified.png': { body: gradient(80, 60), lastModified: 'Tue, 01 Jul 2025 10:00:00 GMT' },
    '/fresh.png': { body: gradient(72, 48), etag: '"f1"', cacheControl: 'public, max-age=600' },
    '/bare.png': { body: gradient(64, 40) },
    '/changing.png': { body: gradient(100, 50), etag: '"c1"' },
    '/large.png': { body: gradient(2400, 1600), etag: '"l1"', cacheControl: 'public, max-age=600' },
  });
  server = await startTestServer(env());
});

test.after(async () => {
  await server.close();
  await origin.close();
});

function metric(text: string, pattern: RegExp): number {
  return [...text.matchAll(pattern)].reduce((sum, m) => sum + Number(m[1]), 0);
}
const jobsRun = (text: string) => metric(text, /^matte_job_duration_seconds_count\{[^}]*\} (\d+)$/gm);
const cacheCount = (text: string, outcome: string) => metric(text, new RegExp(`^matte_result_cache_total\\{outcome="${outcome}"\\} (\\d+)$`, 'gm'));

/** Waits until every answer so far was written to the cache (writes follow the answer). */
async function written(s: TestServer): Promise<void> {
  await waitFor('the result cache writes', async () => {
    const text = await scrapeMetrics(s);
    return cacheCount(text, 'stored') + cacheCount(text, 'dropped') >= cacheCount(text, 'miss');
  });
}

const cf = (options: string, source: string) => `/cdn-cgi/image/${options}${source}`;

test('a repeat with a validator: the source revalidated (304, no body), no job, the same bytes', async () => {
  const url = cf('width=48,format=png', '/etag.png');
  const first = await get(server.url, url);
  assert.is(first.status, 200, first.body.toString());
  assert.is(first.headers.get('x-image-width'), '48');
  await written(server);
  const before = { requests: origin.requests, bodies: origin.bodies, jobs: jobsRun(await scrapeMetrics(server)) };
  const again = await get(server.url, url);
  assert.is(again.status, 200);
  assert.equal(again.body, first.body);
  assert.is(again.headers.get('etag'), first.headers.get('etag'));
  assert.is(origin.requests, before.requests + 1, 'one conditional request');
  assert.is(origin.bodies, before.bodies, 'no body fetched');
  const text = await scrapeMetrics(server);
  assert.is(jobsRun(text), before.jobs, 'no job');
  assert.ok(cacheCount(text, 'hit') >= 1);
});

test('Last-Modified is a validator too (If-Modified-Since)', async () => {
  const url = cf('width=40,format=png', '/modified.png');
  assert.is((await get(server.url, url)).status, 200);
  await written(server);
  const bodies = origin.bodies;
  const again = await get(server.url, url);
  assert.is(again.status, 200);
  assert.is(origin.bodies, bodies, 'no body fetched');
});

test("a source still fresh by its own Cache-Control is not asked at all", async () => {
  const url = cf('width=36,format=png', '/fresh.png');
  assert.is((await get(server.url, url)).status, 200);
  await written(server);
  const requests = origin.requests;
  const jobs = jobsRun(await scrapeMetrics(server));
  const again = await get(server.url, url);
  assert.is(again.status, 200);
  assert.is(origin.requests, requests, 'no request to the source');
  assert.is(jobsRun(await scrapeMetrics(server)), jobs, 'no job');
});

test('If-None-Match with the ETag: 304 with no job and no body fetched', async () => {
  const url = cf('width=32,format=webp', '/etag.png');
  const first = await get(server.url, url);
  const etag = first.headers.get('etag')!;
  assert.match(etag, /^"[A-Za-z0-9_-]{32}"$/);
  await written(server);
  const bodies = origin.bodies;
  const jobs = jobsRun(await scrapeMetrics(server));
  const again = await get(server.url, url, { headers: { 'If-None-Match': etag } });
  assert.is(again.status, 304);
  assert.is(again.headers.get('etag'), etag);
  assert.is(again.headers.get('cache-control'), 'public, max-age=3600');
  assert.is(origin.bodies, bodies);
  assert.is(jobsRun(await scrapeMetrics(server)), jobs);
});

test('a source without validators: its body is fetched again, but no job runs', async () => {
  const url = cf('width=30,format=png', '/bare.png');
  assert.is((await get(server.url, url)).status, 200);
  await written(server);
  const bodies = origin.bodies;
  const jobs = jobsRun(await scrapeMetrics(server));
  assert.is((await get(server.url, url)).status, 200);
  assert.is(origin.bodies, bodies + 1);
  assert.is(jobsRun(await scrapeMetrics(server)), jobs, 'the bytes identify the answer: no job');
});

test('a changed source is a new answer with a new ETag', async () => {
  const url = cf('width=50,format=png', '/changing.png');
  const first = await get(server.url, url);
  assert.is((await decode(first.body)).height, 25);
  await written(server);
  origin.files.set('/changing.png', { body: gradient(100, 100), etag: '"c2"' });
  const second = await get(server.url, url);
  assert.is(second.status, 200);
  assert.is((await decode(second.body)).height, 50);
  assert.is.not(second.headers.get('etag'), first.headers.get('etag'));
});

test("matte's own signed URLs answer a repeat from the cache", async () => {
  const url = signUrl({ input: `${origin.url}/etag.png`, operations: [{ resize: { width: 24 } }] }, { key: KEY, format: 'png' });
  const first = await get(server.url, url);
  assert.is(first.status, 200, first.body.toString());
  await written(server);
  const jobs = jobsRun(await scrapeMetrics(server));
  const bodies = origin.bodies;
  const again = await get(server.url, url);
  assert.equal(again.body, first.body);
  assert.is(jobsRun(await scrapeMetrics(server)), jobs, 'no job');
  assert.is(origin.bodies, bodies, 'no body fetched');
});

test('processes sharing a results directory share the cache', async () => {
  const dir = await tempDir('matte-shared-results-');
  const a = await startTestServer(env({ MATTE_RESULTS_DIR: dir }));
  const b = await startTestServer(env({ MATTE_RESULTS_DIR: dir }));
  try {
    const url = cf('width=44,format=png', '/etag.png');
    const first = await get(a.url, url);
    await written(a);
    const again = await get(b.url, url);
    assert.equal(again.body, first.body);
    assert.is(jobsRun(await scrapeMetrics(b)), 0, 'the second process ran no job');
    assert.is(cacheCount(await scrapeMetrics(b), 'hit'), 1);
  } finally {
    await a.close();
    await b.close();
  }
});

test("a signed URL that names no model is cached per model: a server with another default runs its own job", async () => {
  const dir = await tempDir('matte-model-results-');
  const { MATTE_MODELS_FILE } = (await brightnessModelEnv(dir, 16)).env;
  const a = await startTestServer(env({ MATTE_RESULTS_DIR: dir, MATTE_MODELS: 'u2netp,mean', MATTE_MODELS_FILE }));
  const b = await startTestServer(env({ MATTE_RESULTS_DIR: dir, MATTE_MODELS: 'mean,u2netp', MATTE_MODELS_FILE }));
  try {
    const url = signUrl({ input: `${origin.url}/etag.png`, refine: false }, { key: KEY, format: 'png' });
    const first = await get(a.url, url);
    assert.is(first.status, 200, first.body.toString());
    await written(a);
    const other = await get(b.url, url);
    assert.is(other.status, 200, other.body.toString());
    assert.is(jobsRun(await scrapeMetrics(b)), 1, "the other default model's job ran");
    assert.is(cacheCount(await scrapeMetrics(b), 'hit'), 0);
    assert.not.equal(other.body, first.body);
  } finally {
    await a.close();
    await b.close();
  }
});

test('replicas on one S3 bucket share the cache (entries marked, under result-cache/)', async () => {
  const s3 = await startTestS3();
  const a = await startTestServer(env(s3.env('shared/')));
  const b = await startTestServer(env(s3.env('shared/')));
  try {
    const url = cf('width=42,format=png', '/etag.png');
    const first = await get(a.url, url);
    assert.is(first.status, 200, first.body.toString());
    await written(a);
    const again = await get(b.url, url);
    assert.equal(again.body, first.body);
    assert.is(jobsRun(await scrapeMetrics(b)), 0, 'the second replica ran no job');
    assert.ok(s3.puts.some((key) => key.startsWith('shared/result-cache/')), s3.puts.join(' '));
  } finally {
    await a.close();
    await b.close();
    await s3.close();
  }
});

test('the entry bound holds: the least recently used go', async () => {
  const s = await startTestServer(env({ MATTE_RESULT_CACHE_MAX_ENTRIES: '4' }));
  try {
    for (const width of [10, 11, 12, 13, 14, 15, 16, 17]) {
      assert.is((await get(s.url, cf(`width=${width},format=png`, '/etag.png'))).status, 200);
      await written(s);
    }
    const entries = (await readdir(join(s.resultsDir, 'result-cache'))).filter((n) => /^[0-9a-f]{64}$/.test(n));
    assert.ok(entries.length <= 4, `${entries.length} entries`);
    // The latest answer is among those kept.
    const jobs = jobsRun(await scrapeMetrics(s));
    await get(s.url, cf('width=17,format=png', '/etag.png'));
    assert.is(jobsRun(await scrapeMetrics(s)), jobs);
  } finally {
    await s.close();
  }
});

test('MATTE_RESULT_CACHE_MAX_BYTES=0: every request runs its job', async () => {
  const s = await startTestServer(env({ MATTE_RESULT_CACHE_MAX_BYTES: '0' }));
  try {
    const url = cf('width=20,format=png', '/etag.png');
    await get(s.url, url);
    await get(s.url, url);
    assert.is(jobsRun(await scrapeMetrics(s)), 2);
  } finally {
    await s.close();
  }
});

test("a repeat's server CPU is at most 5% of the first request's", async () => {
  // The server in a process of its own, its CPU read from /proc (clock ticks): the origin and the
  // client are not counted. A warm process: another URL runs first. The source says how long it
  // stays fresh, as static hosts do: a repeat asks it nothing (a revalidation's cost: bench/README.md).
  const dir = await tempDir('matte-cpu-results-');
  const child = await spawnServer({ ...env({ MATTE_RESULTS_DIR: dir }), MATTE_API_KEYS: 'cpu-test-key-0123456789', MATTE_METRICS_ADDRESS: 'off' });
  const ticks = () => {
    const fields = readFileSync(`/proc/${child.child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  };
  try {
    assert.is((await get(child.url, cf('width=700,format=webp', '/large.png'))).status, 200);
    // A photo's size in, a page's size out: the job the cache spares.
    const url = cf('width=1200,format=webp,quality=80', '/large.png');
    let start = ticks();
    assert.is((await get(child.url, url)).status, 200);
    const first = ticks() - start;
    await waitFor('the answer in the cache', async () => (await readdir(join(dir, 'result-cache'))).filter((n) => /^[0-9a-f]{64}$/.test(n)).length >= 3); // the source and two answers
    const repeats = 20;
    start = ticks();
    for (let i = 0; i < repeats; i++) assert.is((await get(child.url, url)).status, 200);
    const repeat = (ticks() - start) / repeats;
    assert.ok(repeat <= first * 0.05, `a repeat took ${repeat} ticks of CPU, the first ${first}`);
  } finally {
    await child.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
