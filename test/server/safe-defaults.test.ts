// run-tests: parallel
// The defaults an operator gets without reading the docs, each tried as an attacker would: the
// generated key never in the JSON log; /metrics not on the public port without a key; result ids
// kept out of the access log whatever spelling of the path is sent (and such spellings not
// routed); a wrong-key guesser slowed to 429; downloads that a browser will not sniff or run, and
// JSON it will not sniff either; a finite result quota.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../server/app.js';
import { loadConfig } from '../../server/config.js';
import { gradient } from '../helpers/images.js';
import { captureLog } from '../helpers/log.js';
import { get, post, rawRequest, serverProcessEnv, sleep, startTestServer, statusOf, tempDir, TEST_KEY } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const png = gradient(16, 16);
const root = fileURLToPath(new URL('../../../', import.meta.url));

test('no MATTE_API_KEYS: the generated key is printed on stderr, never on stdout (the JSON log)', async () => {
  const dir = await tempDir('matte-results-');
  const child = spawn(process.execPath, [join(root, 'dist/server/main.js')], {
    cwd: root,
    env: serverProcessEnv({ PORT: '0', HOST: '127.0.0.1', MATTE_LOG_LEVEL: 'info', MATTE_METRICS_ADDRESS: 'off', MATTE_RESULTS_DIR: dir, UV_THREADPOOL_SIZE: '4' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const deadline = Date.now() + 20_000;
  while (!/"msg":"listening"/.test(stdout) && Date.now() < deadline && child.exitCode === null) await sleep(50);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('close', r)); // 'close': both pipes have been read to the end
  await rm(dir, { recursive: true, force: true });
  const key = /this run's API key is\s+(\S+)/.exec(stderr)?.[1];
  assert.ok(key, `the key is on stderr:\n${stderr}`);
  assert.ok(/"msg":"listening"/.test(stdout), 'the JSON log is on stdout');
  assert.not.ok(stdout.includes(key!), 'the key is not on stdout');
});

test('/metrics: 404 on the public port without MATTE_METRICS_KEY, served on MATTE_METRICS_ADDRESS', async () => {
  const server = await startTestServer({ MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
  try {
    assert.is((await get(server.url, '/metrics')).status, 404);
    const m = await get(server.running.metrics!.url, '/metrics');
    assert.is(m.status, 200);
    assert.match(m.body.toString(), /matte_jobs_running/);
    assert.is((await get(server.running.metrics!.url, '/other')).status, 404);
  } finally {
    await server.close();
  }
  assert.equal(loadConfig({}).metricsAddress, { host: '127.0.0.1', port: 9464 });
  assert.equal(loadConfig({ MATTE_METRICS_ADDRESS: '[::1]:9100' }).metricsAddress, { host: '::1', port: 9100 });
  assert.is(loadConfig({ MATTE_METRICS_ADDRESS: 'off' }).metricsAddress, undefined);
  assert.throws(() => loadConfig({ MATTE_METRICS_ADDRESS: '9464' }), /MATTE_METRICS_ADDRESS/);
});

test('/Images/Results/<id>.png and a trailing slash: not routed (404), and the access log never holds the id', async () => {
  const captured = captureLog();
  const dir = await tempDir('matte-results-');
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', MATTE_API_KEYS: TEST_KEY, MATTE_RESULTS_DIR: dir, MATTE_METRICS_ADDRESS: 'off' });
  const running = await startServer({ config, logger: captured.logger });
  try {
    const stored = await post(running.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]' });
    const { id, url } = stored.json() as { id: string; url: string };
    const path = new URL(url).pathname;
    assert.is((await get(running.url, path)).status, 200);
    for (const variant of [path.replace('/images/results/', '/Images/Results/'), `${path}/`, path.toUpperCase(), `${path}/x`]) {
      assert.is((await get(running.url, variant)).status, 404, variant);
    }
    // The access line is written when the response closes: one for each of the six requests.
    await waitFor('the six access lines', () => captured.text().split('"status":').length - 1 >= 6);
    const log = captured.text();
    assert.ok(log.includes('"path":"/images/results/'), 'the downloads were logged');
    assert.not.ok(log.includes(id.slice(6)), 'no access line holds the id past its first 6 characters');
    assert.not.ok(log.toLowerCase().includes(id.slice(6).toLowerCase()), 'nor in another case');
  } finally {
    await running.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a wrong-key guesser: past MATTE_AUTH_FAILURES_PER_MINUTE different keys, 429 with Retry-After; a right key is still served', async () => {
  const server = await startTestServer({ MATTE_AUTH_FAILURES_PER_MINUTE: '5', MATTE_METRICS_KEY: 'scrape-secret' });
  try {
    const fields = { input: png, operations: '[{"flip":"h"}]', output: 'raw' };
    for (let i = 0; i < 5; i++) assert.is((await post(server.url, '/images/edit', fields, { key: `guess-${i}` })).status, 401);
    const r = await post(server.url, '/images/edit', fields, { key: 'guess-5' });
    assert.is(r.status, 429, r.body.toString());
    assert.is(r.json().error.code, 'too_many_failures');
    const retry = Number(r.headers.get('retry-after'));
    assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
    assert.is((await post(server.url, '/images/edit', fields)).status, 200, 'a right key is never refused for wrong ones (test/server/trusted-proxies.test.ts)');
    const metrics = (key: string) => get(server.url, '/metrics', { headers: { Authorization: `Bearer ${key}` } });
    assert.is((await metrics('guess-6')).status, 429, 'the metrics key is guarded by the same count');
    assert.is((await metrics('scrape-secret')).status, 200);
    assert.is((await get(server.url, '/healthz')).status, 200, 'routes without a key are not affected');
  } finally {
    await server.close();
  }
  assert.is(loadConfig({}).authFailuresPerMinute, 20);
});

test('downloads and raw results: X-Content-Type-Options nosniff and Content-Security-Policy sandbox', async () => {
  const server = await startTestServer();
  try {
    const raw = await post(server.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]', output: 'raw' });
    const stored = await post(server.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]' });
    const download = await get(stored.json().url, '');
    const head = await get(stored.json().url, '', { method: 'HEAD' });
    for (const r of [raw, download, head]) {
      assert.is(r.status, 200);
      assert.is(r.headers.get('x-content-type-options'), 'nosniff');
      assert.is(r.headers.get('content-security-policy'), 'sandbox');
    }
  } finally {
    await server.close();
  }
});

test('JSON answers and JSON errors, from every route and from the HTTP parser: X-Content-Type-Options nosniff', async () => {
  const server = await startTestServer({ MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
  try {
    const json = { 'X-Api-Key': TEST_KEY, 'Content-Type': 'application/json' };
    const replies = {
      'a stored result': await post(server.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]' }),
      'an invalid form': await post(server.url, '/images/edit', { input: png, operations: '[{"flip":"x"}]' }),
      'a wrong key': await post(server.url, '/images/edit', { input: png, operations: '[]' }, { key: 'wrong-key-0123456789' }),
      'no route': await get(server.url, '/nothing-here'),
      '/healthz': await get(server.url, '/healthz'),
      'remove.bg /account': await get(server.url, '/v1.0/account', { headers: { 'X-Api-Key': TEST_KEY } }),
      'remove.bg /improve': await get(server.url, '/v1.0/improve', { method: 'POST', headers: json, body: JSON.stringify({ image_file_b64: png.toString('base64') }) }),
      'a remove.bg error': await get(server.url, '/v1.0/removebg', { method: 'POST', headers: json, body: '{"image_url":[]}' }),
      "the metrics listener's 404": await get(server.running.metrics!.url, '/other'),
    };
    for (const [what, reply] of Object.entries(replies)) {
      assert.match(reply.headers.get('content-type') ?? '', /^application\/json/, what);
      assert.is(reply.headers.get('x-content-type-options'), 'nosniff', what);
    }
    const parser = await rawRequest(server.port, ['NOT HTTP AT ALL\r\n\r\n']);
    assert.is(statusOf(parser.text), 400);
    assert.match(parser.text, /\r\nX-Content-Type-Options: nosniff\r\n/);
  } finally {
    await server.close();
  }
});

test('the result quota is finite by default (1 GiB); 0 still turns it off', () => {
  assert.is(loadConfig({}).resultsMaxBytes, 1024 ** 3);
  assert.is(loadConfig({ MATTE_RESULTS_MAX_BYTES: '0' }).resultsMaxBytes, 0);
});

test.run();
