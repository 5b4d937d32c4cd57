// run-tests: parallel
// The access log never holds a capability or an input URL: result paths are logged with a short
// prefix of the id only, signed paths with a short prefix of the signature and the extension
// (their options segment is the base64url of the input URL and the options).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signUrl } from '../../lib/index.js';
import { startServer } from '../../server/app.js';
import { loadConfig } from '../../server/config.js';
import { gradient } from '../helpers/images.js';
import { captureLog } from '../helpers/log.js';
import { get, post, tempDir } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const SIGNING_KEY = 'signing-key-0123456789abcdef0123456789';
const log = captureLog();
const origin = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'image/png' }).end(gradient(16, 16)));
await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
const originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  MATTE_API_KEYS: 'test-key-0123456789abcdef',
  MATTE_RESULTS_DIR: await tempDir('matte-results-'),
  MATTE_URL_SIGNING_KEYS: SIGNING_KEY,
  MATTE_ALLOW_PRIVATE_URLS: '1',
  MATTE_URL_PORTS: '*',
  MATTE_METRICS_ADDRESS: 'off',
});
const running = await startServer({ config, logger: log.logger });
const base = running.url;

/** The access lines logged so far. */
const requestLines = () => log.text().split('\n').filter((line) => line.includes('"msg":"request"'));

test('a stored result is downloaded; no log line holds its id', async () => {
  const r = await post(base, '/images/edit', { input: gradient(16, 16), operations: '[{"flip":"h"}]' });
  assert.is(r.status, 200);
  const { id, url } = r.json() as { id: string; url: string };
  assert.is((await get(base, new URL(url).pathname)).status, 200);
  assert.is((await get(base, `/images/results/${id}.webp`)).status, 404);
  await waitFor('the access log lines of both downloads', () => log.text().split('"path":"/images/results/').length - 1 >= 2);
  assert.match(log.text(), /"path":"\/images\/results\//);
  assert.not.ok(log.text().includes(id), 'the id is in the log');
  assert.not.ok(log.text().includes(id.slice(0, 12)), 'half of the id is in the log');
  assert.ok(log.text().includes(`/images/results/${id.slice(0, 6)}`), 'a short prefix identifies the result');
});

test('signed URLs in the access log: no signature, no options segment, no input URL, whatever the answer', async () => {
  const secret = `${originUrl}/private/catalogue-item-4711.png`;
  const signed = signUrl({ input: secret, operations: [{ flip: 'h' }] }, { key: SIGNING_KEY, format: 'webp' });
  const [, , , signature, rest] = signed.split('/');
  const options = rest!.slice(0, rest!.lastIndexOf('.'));
  const before = requestLines().length;
  const paths = [signed, `/images/signed/${'A'.repeat(43)}/${options}.webp`, `/images/signed/${signature}/${options}.png`, `//images//signed//${signature}/${options}.webp`, `/IMAGES/SIGNED/${signature}/${options}.webp`];
  const statuses = [];
  for (const path of paths) statuses.push((await get(base, path)).status);
  assert.equal(statuses, [200, 403, 403, 404, 404]);
  await waitFor('the access lines of the signed requests', () => requestLines().length >= before + paths.length);
  const lines = requestLines().slice(before).join('\n');
  assert.not.ok(lines.includes(signature!), 'a signature is in the log');
  assert.not.ok(lines.includes(options.slice(0, 12)), 'the options segment is in the log');
  assert.not.ok(lines.includes('catalogue-item'), 'the input URL is in the log');
  assert.not.ok(lines.includes(originUrl), 'the input host is in the log');
  assert.ok(lines.includes(`"path":"/images/signed/${signature!.slice(0, 6)}…/….webp"`), 'a short prefix of the signature and the format identify the request');
});

test.after(async () => {
  await running.close();
  origin.close();
});
test.run();
