// run-tests: parallel
// GET /metrics (prom-client), scraped after real requests: request counts by route and status,
// durations, jobs, 503s, job and model durations, stored results and bytes, URL fetches by
// outcome, event-loop lag and process metrics; and MATTE_METRICS_KEY. Labels are route patterns
// or fixed names: a stream of distinct signed URLs, ids and paths adds no series and prints none.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { statfs } from 'node:fs/promises';
import { signUrl } from '../../lib/index.js';
import { signPath } from '../../lib/signed-url.js';
import { gradient } from '../helpers/images.js';
import { get, post, scrapeMetrics, startTestServer, TEST_KEY, waitForJobs, type TestServer } from '../helpers/server.js';

const png = gradient(64, 48);
const SLOW = JSON.stringify([{ resize: { width: 3000, height: 3000, fit: 'cover' } }, { blur: 40 }]);

/** The value of one sample, e.g. sample(text, 'matte_results_stored_total{store="disk"}'). */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

test('after real requests, /metrics shows each of them', async () => {
  const images = http.createServer((req, res) => {
    if (req.url === '/image.png') res.writeHead(200, { 'Content-Type': 'image/png' }).end(png);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
  const host = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
  const server: TestServer = await startTestServer({ MATTE_ALLOW_PRIVATE_URLS: '1', MATTE_URL_PORTS: '*', MATTE_CONCURRENCY: '1', MATTE_QUEUE_LIMIT: '0', MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
  try {
    const stored = await post(server.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]' });
    assert.is(stored.status, 200);
    const size = (await get(stored.json().url, '')).body.length;
    assert.is((await post(server.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]', output: 'raw' })).status, 200);
    assert.is((await post(server.url, '/images/remove-background', { input: png, output: 'raw' })).status, 200);
    assert.is((await post(server.url, '/images/edit', { input: `${host}/image.png`, operations: '[{"flip":"v"}]', output: 'raw' })).status, 200);
    assert.is((await post(server.url, '/images/edit', { input: `${host}/missing.png`, operations: '[{"flip":"v"}]', output: 'raw' })).status, 422);
    assert.is((await get(server.url, '/images/results/AAAAAAAAAAAAAAAAAAAAAAAA.png')).status, 404);
    assert.is((await get(server.url, '/no/such/route')).status, 404);
    // One 503: the only slot is busy and no queue is allowed.
    const slow = post(server.url, '/images/edit', { input: png, operations: SLOW, output: 'raw' });
    await waitForJobs(server.url, 1);
    assert.is((await post(server.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]', output: 'raw' })).status, 503);
    assert.is((await slow).status, 200);

    await server.running.services.store.sweep(); // what the sweeper would count next
    const m = await get(server.running.metrics!.url, '/metrics'); // the listener of MATTE_METRICS_ADDRESS
    assert.is(m.status, 200);
    assert.match(m.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = m.body.toString();
    assert.is(sample(text, 'matte_http_requests_total{route="/images/edit",method="POST",status="200"}'), 4);
    assert.is(sample(text, 'matte_http_requests_total{route="/images/edit",method="POST",status="422"}'), 1);
    assert.is(sample(text, 'matte_http_requests_total{route="/images/edit",method="POST",status="503"}'), 1);
    assert.is(sample(text, 'matte_http_requests_total{route="/images/remove-background",method="POST",status="200"}'), 1);
    assert.is(sample(text, 'matte_http_requests_total{route="/images/results/:name",method="GET",status="200"}'), 1);
    assert.is(sample(text, 'matte_http_requests_total{route="/images/results/:name",method="GET",status="404"}'), 1);
    assert.is(sample(text, 'matte_http_requests_total{route="unmatched",method="GET",status="404"}'), 1);
    assert.not.match(text, /AAAAAAAAAAAAAAAAAAAAAAAA/, 'no id or path becomes a label');
    assert.is(sample(text, 'matte_http_request_duration_seconds_count{route="/images/edit",method="POST"}'), 6);
    assert.is(sample(text, 'matte_http_unavailable_total{code="overloaded"}'), 1);
    assert.is(sample(text, 'matte_jobs_running'), 0);
    assert.is(sample(text, 'matte_jobs_queued'), 0);
    assert.is(sample(text, 'matte_job_duration_seconds_count{endpoint="/images/edit"}'), 4);
    assert.is(sample(text, 'matte_job_duration_seconds_count{endpoint="/images/remove-background"}'), 1);
    assert.is(sample(text, 'matte_model_job_duration_seconds_count{model="u2netp"}'), 1);
    assert.is(sample(text, 'matte_results_stored_total{store="disk"}'), 1);
    assert.is(sample(text, 'matte_results_stored_bytes_total{store="disk"}'), size);
    assert.is(sample(text, 'matte_results_in_store{store="disk"}'), 1);
    const block = (await statfs(server.resultsDir)).bsize;
    assert.is(sample(text, 'matte_results_in_store_bytes{store="disk"}'), Math.ceil(size / block) * block, 'the space it takes: whole blocks');
    assert.is(sample(text, 'matte_url_fetches_total{outcome="ok"}'), 1);
    assert.is(sample(text, 'matte_url_fetches_total{outcome="input_url_fetch_failed"}'), 1);
    assert.ok((sample(text, 'nodejs_eventloop_lag_seconds') ?? -1) >= 0);
    assert.ok((sample(text, 'process_resident_memory_bytes') ?? 0) > 0);
    assert.is((await get(server.url, '/metrics')).status, 404, 'not on the public port without MATTE_METRICS_KEY');
  } finally {
    await server.close();
    images.close();
  }
});

/** The series of a scrape (name and labels), matte's own, in order. */
function series(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('matte_'))
    .map((line) => line.slice(0, line.lastIndexOf(' ')));
}

test('signed URLs, ids and paths as metric labels: many distinct requests add no series and print none', async () => {
  const KEY = 'signing-key-0123456789abcdef0123456789';
  const images = http.createServer((req, res) => res.writeHead(200, { 'Content-Type': 'image/png' }).end(png));
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
  const host = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
  const server = await startTestServer({ MATTE_URL_SIGNING_KEYS: KEY, MATTE_ALLOW_PRIVATE_URLS: '1', MATTE_URL_PORTS: '*', MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
  const sent: string[] = []; // every path and input URL sent: none may appear on /metrics
  try {
    /** One request of every kind, each with its own path (its own signature, options, id, URL). */
    const round = async (i: number) => {
      const input = `${host}/image-${i}-${randomBytes(6).toString('hex')}.png`;
      const edit = signUrl({ input, operations: [{ resize: { width: 8 + (i % 50) } }] }, { key: KEY, format: 'webp' });
      const cutOut = signUrl({ input, trim: i % 2 === 0 }, { key: KEY });
      const rest = `/${Buffer.from(JSON.stringify({ input, operations: [{ flip: 'h' }] })).toString('base64url')}.png`;
      const unsigned = `/images/signed/${signPath('another-key-0123456789abcdef01234567', rest)}${rest}`;
      const id = randomBytes(18).toString('base64url');
      const paths = [edit, cutOut, unsigned, `/images/results/${id}.png`, `/no/such/${randomBytes(8).toString('hex')}`];
      sent.push(input, ...paths, id);
      assert.is((await get(server.url, edit)).status, 200);
      assert.is((await get(server.url, cutOut)).status, 200);
      assert.is((await get(server.url, unsigned)).status, 403);
      assert.is((await get(server.url, paths[3]!)).status, 404);
      assert.is((await get(server.url, paths[4]!)).status, 404);
      const posted = await post(server.url, `/images/edit?n=${i}`, { input, operations: '[{"flip":"v"}]', output: 'raw' });
      assert.is(posted.status, 200);
    };
    await round(0);
    const first = series(await scrapeMetrics(server));
    for (let i = 1; i <= 60; i++) await round(i);
    const text = await scrapeMetrics(server);
    assert.equal(series(text), first, 'the same series after 60 more of each kind');
    assert.match(text, /matte_job_duration_seconds_count\{endpoint="\/images\/signed\/\*rest"\} 122/);
    assert.match(text, /matte_http_requests_total\{route="\/images\/signed\/\*rest",method="GET",status="200"\} 122/);
    for (const leaked of sent) assert.not.ok(text.includes(leaked), `/metrics holds ${leaked}`);
    assert.not.match(text, /images\/signed\/[A-Za-z0-9_-]{20}/, 'no signature');
    assert.not.ok(text.includes('127.0.0.1'), 'no input URL');
  } finally {
    await server.close();
    images.close();
  }
});

test('MATTE_METRICS_KEY: /metrics only with that key (Bearer or X-Api-Key), not with an API key', async () => {
  const server = await startTestServer({ MATTE_METRICS_KEY: 'scrape-secret' });
  try {
    const none = await get(server.url, '/metrics');
    assert.is(none.status, 401);
    assert.is(none.json().error.code, 'unauthorized');
    assert.is((await get(server.url, '/metrics', { headers: { 'X-Api-Key': TEST_KEY } })).status, 401);
    assert.is((await get(server.url, '/metrics', { headers: { Authorization: 'Bearer wrong' } })).status, 401);
    assert.is((await get(server.url, '/metrics', { headers: { Authorization: 'Bearer scrape-secret' } })).status, 200);
    assert.is((await get(server.url, '/metrics', { headers: { 'X-Api-Key': 'scrape-secret' } })).status, 200);
    const doc = (await get(server.url, '/openapi.json')).json();
    assert.ok(doc.paths['/metrics'].get.responses['401'], '/metrics is in the OpenAPI document');
    assert.ok(doc.paths['/images/edit'].post.responses['507']);
  } finally {
    await server.close();
  }
});

test.run();
