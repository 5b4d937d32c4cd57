// run-tests: parallel
// Responsive images through the real server on loopback (docs/api.md, "Extensions: responsive
// images"): a signed `.auto` URL answers each browser's Accept header (and curl's) with its
// format, `Vary: Accept` and an ETag per format; MATTE_AUTO_FORMATS narrows the choice; an
// animation keeps its frames; `subject` crops run the server's model once a photo (the matte
// cache); bad operations are 400 with their path before the input is fetched.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { signUrl, type Operation } from '../../lib/index.js';
import { signPath } from '../../lib/signed-url.js';
import { ACCEPT_HEADERS } from '../helpers/accept-headers.js';
import { brightnessModelEnv } from '../helpers/onnx.js';
import { decode, formatOf, gifFrames, gradient, makeGif, makePng, pixel } from '../helpers/images.js';
import { get, post, scrapeMetrics, startTestServer, tempDir, type TestServer } from '../helpers/server.js';

const KEY = 'signing-key-0123456789abcdef0123456789';
const photo = gradient(64, 48);
/** Black with a white disc at x = 330 of 400: off-centre, what the mean model takes for the subject. */
const offCentre = makePng(400, 200, (x, y) => ((x + 0.5 - 330) ** 2 + (y + 0.5 - 100) ** 2 <= 40 * 40 ? [255, 255, 255] : [0, 0, 0]), { alpha: false });
const animation = makeGif(32, 24, [[250, 10, 10], [10, 250, 10], [10, 10, 250]]);
const bodies: Record<string, Buffer> = { '/photo.png': photo, '/subject.png': offCentre, '/animation.gif': animation };
let origin: http.Server;
let base: string;
let hits = 0;
let server: TestServer;
let webpOnly: TestServer;
let scratch = '';

test.before(async () => {
  origin = http.createServer((req, res) => {
    hits++;
    const body = bodies[req.url ?? ''] ?? photo;
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': body.length });
    res.end(body);
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  // The server's one model: a channel mean (the matte is the brightness), so the subject is known.
  scratch = await tempDir('matte-responsive-');
  const model = await brightnessModelEnv(scratch, 32);
  const env = { MATTE_URL_SIGNING_KEYS: KEY, MATTE_ALLOW_PRIVATE_URLS: '1', MATTE_URL_PORTS: '*', ...model.env };
  server = await startTestServer({ ...env, MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
  webpOnly = await startTestServer({ ...env, MATTE_AUTO_FORMATS: 'webp' });
});

test.after(async () => {
  await server.close();
  await webpOnly.close();
  origin.close();
  await rm(scratch, { recursive: true, force: true });
});

const autoUrl = (input: string, operations: Operation[]) => signUrl({ input: `${base}${input}`, operations }, { key: KEY, format: 'auto' });
const fetchAs = (target: TestServer, url: string, accept: string, headers: Record<string, string> = {}) => get(target.url, url, { headers: { Accept: accept, ...headers } });

test('a signed .auto URL: each browser\'s Accept header gets its format, Vary: Accept, an ETag per format', async () => {
  const url = autoUrl('/photo.png', [{ resize: { width: 32 } }]);
  const expected: Record<keyof typeof ACCEPT_HEADERS, string> = { chrome: 'avif', chromeTab: 'avif', firefox: 'avif', firefox115: 'avif', safari17: 'avif', safari15: 'webp', curl: 'jpeg' };
  const etags = new Map<string, string>();
  for (const [browser, accept] of Object.entries(ACCEPT_HEADERS) as [keyof typeof ACCEPT_HEADERS, string][]) {
    const r = await fetchAs(server, url, accept);
    assert.is(r.status, 200, `${browser}: ${r.body.toString()}`);
    const format = expected[browser];
    assert.is(formatOf(r.body), format, browser);
    assert.is(r.headers.get('content-type'), `image/${format}`, browser);
    assert.match(r.headers.get('vary') ?? '', /\bAccept\b/, browser);
    assert.is((await decode(r.body)).width, 32);
    const etag = r.headers.get('etag')!;
    if (etags.has(format)) assert.is(etags.get(format), etag, `${browser}: the same ETag as another browser taking ${format} the same way`);
    etags.set(format, etag);
  }
  assert.is(new Set(etags.values()).size, 3, 'one ETag per format');
  // A 304 for the ETag of the format this Accept takes, with Vary; another format's ETag is no match.
  const chrome = await fetchAs(server, url, ACCEPT_HEADERS.chrome, { 'If-None-Match': etags.get('avif')! });
  assert.is(chrome.status, 304);
  assert.match(chrome.headers.get('vary') ?? '', /\bAccept\b/);
  assert.is(chrome.headers.get('etag'), etags.get('avif'));
  assert.is((await fetchAs(server, url, ACCEPT_HEADERS.safari15, { 'If-None-Match': etags.get('avif')! })).status, 200);
  // A fixed extension does not vary.
  const png = await get(server.url, signUrl({ input: `${base}/photo.png`, operations: [{ resize: { width: 32 } }] }, { key: KEY, format: 'png' }), { headers: { Accept: ACCEPT_HEADERS.chrome } });
  assert.is(png.headers.get('vary'), null);
  assert.is(formatOf(png.body), 'png');
});

test('.auto without AVIF or WebP accepted: PNG where the result has alpha, else JPEG; a background removal: WebP or PNG', async () => {
  const transparent = autoUrl('/photo.png', [{ resize: { width: 32, height: 32, fit: 'pad' } }]);
  assert.is(formatOf((await fetchAs(server, transparent, ACCEPT_HEADERS.curl)).body), 'png');
  const removal = signUrl({ input: `${base}/subject.png` }, { key: KEY, format: 'auto' });
  const webp = await fetchAs(server, removal, ACCEPT_HEADERS.safari15);
  assert.is(formatOf(webp.body), 'webp');
  assert.match(webp.headers.get('vary') ?? '', /Accept/);
  const curl = await fetchAs(server, removal, ACCEPT_HEADERS.curl);
  assert.is(formatOf(curl.body), 'png');
  assert.ok((await decode(curl.body)).hasAlpha);
});

test('MATTE_AUTO_FORMATS=webp: Chrome gets WebP, and its ETag is not the AVIF one', async () => {
  const url = autoUrl('/photo.png', [{ resize: { width: 32 } }]);
  const r = await fetchAs(webpOnly, url, ACCEPT_HEADERS.chrome);
  assert.is(formatOf(r.body), 'webp');
  const onFull = await fetchAs(server, url, ACCEPT_HEADERS.chrome);
  assert.is.not(r.headers.get('etag'), onFull.headers.get('etag'));
  assert.is(formatOf((await fetchAs(webpOnly, url, ACCEPT_HEADERS.curl)).body), 'jpeg');
});

test('.auto keeps an animation\'s frames: WebP where it is taken, else GIF', async () => {
  const url = autoUrl('/animation.gif', [{ resize: { width: 16 } }]);
  const chrome = await fetchAs(server, url, ACCEPT_HEADERS.chrome);
  assert.is(formatOf(chrome.body), 'webp');
  assert.match(chrome.body.subarray(0, 64).toString('latin1'), /ANIM/);
  const curl = await fetchAs(server, url, ACCEPT_HEADERS.curl);
  assert.is(formatOf(curl.body), 'gif');
  assert.is(gifFrames(curl.body), 3);
});

test('POST format=auto keeps its meaning whatever the Accept: PNG or JPEG', async () => {
  const r = await post(server.url, '/images/edit', { input: photo, operations: '[{"resize":{"width":20}}]', format: 'auto', output: 'raw' }, { headers: { Accept: ACCEPT_HEADERS.chrome } });
  assert.is(r.status, 200, r.body.toString());
  assert.is(formatOf(r.body), 'jpeg');
  assert.is(r.headers.get('vary'), null);
});

/** Matte cache lookups by outcome, from /metrics. */
async function cacheOutcomes(): Promise<Record<string, number>> {
  const text = await scrapeMetrics(server);
  return Object.fromEntries([...text.matchAll(/^matte_matte_cache_total\{outcome="(\w+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
}

test('subject: the server runs its model once a photo; later crops at other sizes take the cached matte', async () => {
  const crop = (width: number, height: number) => post(server.url, '/images/edit', { input: `${base}/subject.png`, operations: JSON.stringify([{ resize: { width, height, fit: 'cover', gravity: 'subject' } }]), output: 'raw' });
  const before = await cacheOutcomes();
  const first = await crop(200, 200);
  assert.is(first.status, 200, first.body.toString());
  const image = await decode(first.body);
  let white = 0;
  for (let y = 0; y < 200; y++) for (let x = 0; x < 200; x++) if (pixel(image, x, y)[0] >= 128) white++;
  assert.ok(white >= 0.98 * Math.PI * 40 * 40, `the subject whole: ${white}`);
  for (let i = 0; i < 100 && (await cacheOutcomes()).stored === before.stored; i++) await new Promise((r) => setTimeout(r, 20));
  const second = await crop(100, 100);
  assert.is(second.status, 200, second.body.toString());
  const after = await cacheOutcomes();
  assert.is(after.miss! - before.miss!, 1, 'one inference');
  assert.is(after.hit! - before.hit!, 1, 'the second crop took the cached matte');
});

test('bad operations are 400 with their path, before the input is fetched (POST and signed GET)', async () => {
  const cases: [unknown, string][] = [
    [{ resize: { width: 10, height: 10, fit: 'cover', gravity: { x: 1.5, y: 0.5 } } }, 'operations[0].resize.gravity.x'],
    [{ resize: { width: 10, height: 10, fit: 'cover', gravity: { x: 0.5, y: -0.01 } } }, 'operations[0].resize.gravity.y'],
    [{ resize: { width: 10, dpr: 0 } }, 'operations[0].resize.dpr'],
    [{ resize: { width: 10, dpr: 5 } }, 'operations[0].resize.dpr'],
    [{ resize: { width: 10, height: 10, fit: 'cover', gravity: 'middle' } }, 'operations[0].resize.gravity'],
    [{ resize: { width: 10, fit: 'pad' } }, 'operations[0].resize.fit'],
    [{ resize: { width: 10, height: 10, fit: 'cover', keepBoxAspect: true } }, 'operations[0].resize.keepBoxAspect'],
    [{ crop: {} }, 'operations[0].crop'],
    [{ sharpen: 11 }, 'operations[0].sharpen'],
  ];
  const fetched = hits;
  for (const [operation, path] of cases) {
    const posted = await post(server.url, '/images/edit', { input: `${base}/photo.png`, operations: JSON.stringify([operation]), output: 'raw' });
    assert.is(posted.status, 400, JSON.stringify(operation));
    assert.equal([posted.json().error.code, posted.json().error.path], ['invalid_operations', path]);
    const rest = `/${Buffer.from(JSON.stringify({ input: `${base}/photo.png`, operations: [operation] })).toString('base64url')}.auto`;
    const signed = await get(server.url, `/images/signed/${signPath(KEY, rest)}${rest}`, { headers: { Accept: ACCEPT_HEADERS.chrome } });
    assert.is(signed.status, 400, JSON.stringify(operation));
    assert.is(signed.json().error.path, path);
  }
  assert.is(hits, fetched, 'no input fetched');
});

test.run();
