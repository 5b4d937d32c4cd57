// run-tests: parallel
// A client that goes away while its input URL is fetched (or the model loads) gets no job: the
// request is dropped before it queues, so nothing runs and nothing is stored for nobody.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import { readdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { gradient } from '../helpers/images.js';
import { form, startTestServer, TEST_KEY } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const png = gradient(64, 64);
let release: () => void = () => {};
let asked: () => void = () => {};
const origin = http.createServer((_req, res) => {
  asked();
  release = () => res.end(png);
  res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': png.length });
});
await new Promise<void>((r) => origin.listen(0, '127.0.0.1', () => r()));
const originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/slow.png`;

const server = await startTestServer({ MATTE_ALLOW_PRIVATE_URLS: '1', MATTE_URL_PORTS: '*' });

async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) if (entry.isFile()) out.push(entry.name);
  return out;
}

test('the client leaves during the URL fetch: the job never runs, nothing is stored', async () => {
  const controller = new AbortController();
  const gotRequest = new Promise<void>((r) => (asked = r));
  const sent = fetch(`${server.url}/images/edit`, {
    method: 'POST',
    body: form({ input: originUrl, operations: '[{"blur":2}]' }),
    headers: { 'X-Api-Key': TEST_KEY },
    signal: controller.signal,
  }).catch((e: Error) => e);
  await gotRequest;
  controller.abort();
  assert.instance(await sent, Error);
  const connections = () => new Promise<number>((resolve, reject) => server.running.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
  await waitFor('the server to see the socket close', async () => (await connections()) === 0);
  release(); // the fetch completes after the client left
  const limiter = server.running.services.limiter;
  await waitFor('the request handler to finish', () => limiter.stats.admitted === 0);
  assert.is(limiter.stats.admitted, 0, 'the request handler did not finish');
  assert.equal(await files(server.resultsDir), []);
});

test('a client that stays gets its result (the same path works)', async () => {
  const gotRequest = new Promise<void>((r) => (asked = r));
  const sent = fetch(`${server.url}/images/edit`, {
    method: 'POST',
    body: form({ input: originUrl, operations: '[{"blur":2}]' }),
    headers: { 'X-Api-Key': TEST_KEY },
  });
  await gotRequest;
  release();
  const r = await sent;
  assert.is(r.status, 200);
  assert.is((await files(server.resultsDir)).length, 1);
});

test.after(async () => {
  await server.close();
  origin.close();
});
test.run();
