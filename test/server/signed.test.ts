// run-tests: parallel
// Signed GET URLs through the real server on loopback: the input URL is served by a loopback
// origin (MATTE_ALLOW_PRIVATE_URLS=1), the URLs are made by the library's signUrl(). What a CDN
// sees is asserted: status, Content-Type, Cache-Control, ETag, 304s, the pixels; and that a URL
// nobody signed never reaches the origin (403, counted) nor the options parser.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signUrl } from '../../lib/index.js';
import { signPath } from '../../lib/signed-url.js';
import { decode, disc, formatOf, gradient, pixel } from '../helpers/images.js';
import { get, rawRequest, scrapeMetrics, startTestServer, statusOf, type TestServer } from '../helpers/server.js';

const KEY = 'signing-key-0123456789abcdef0123456789';
const OLD_KEY = 'an-older-key-0123456789abcdef0123456789';
const photo = gradient(64, 48);
const subject = disc(64, 64, 20, [220, 40, 40], [250, 250, 250]);
let origin: http.Server;
let base: string;
let hits = 0;
let server: TestServer;

test.before(async () => {
  origin = http.createServer((req, res) => {
    hits++;
    const body = req.url === '/subject.png' ? subject : photo;
    res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': body.length });
    res.end(body);
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  server = await startTestServer({
    MATTE_URL_SIGNING_KEYS: `${KEY},${OLD_KEY}`,
    MATTE_ALLOW_PRIVATE_URLS: '1',
    MATTE_URL_PORTS: '*',
    MATTE_SIGNED_MAX_AGE_SECONDS: '86400',
    MATTE_METRICS_ADDRESS: '127.0.0.1:0',
  });
});

test.after(async () => {
  await server.close();
  origin.close();
});

/** A signed path over any options text, valid or not (signUrl refuses what the server would). */
const sign = (json: string, ext: string) => {
  const rest = `/${Buffer.from(json).toString('base64url')}.${ext}`;
  return `/images/signed/${signPath(KEY, rest)}${rest}`;
};

/** The path of a signed URL (signUrl without a base gives one). */
const path = (options: Parameters<typeof signUrl>[0], format?: 'png' | 'webp' | 'jpeg') => signUrl(options, { key: KEY, format });

test('an edit: 200, the image, public immutable caching and an ETag', async () => {
  const r = await get(server.url, path({ input: `${base}/photo.png`, operations: [{ resize: { width: 32 } }] }, 'webp'));
  assert.is(r.status, 200, r.body.toString());
  assert.is(r.headers.get('content-type'), 'image/webp');
  assert.is(formatOf(r.body), 'webp');
  assert.is(r.headers.get('cache-control'), 'public, max-age=86400, immutable');
  assert.match(r.headers.get('etag') ?? '', /^"[A-Za-z0-9_-]{32}"$/);
  assert.is(r.headers.get('x-image-width'), '32');
  assert.is((await decode(r.body)).width, 32);
});

test('If-None-Match: 304 without fetching the input or running a job', async () => {
  const url = path({ input: `${base}/photo.png`, operations: [{ resize: { width: 20 } }] });
  const first = await get(server.url, url);
  const etag = first.headers.get('etag')!;
  const before = hits;
  const jobsBefore = jobsRun(await scrapeMetrics(server));
  const again = await get(server.url, url, { headers: { 'If-None-Match': etag } });
  assert.is(again.status, 304);
  assert.is(again.headers.get('etag'), etag);
  assert.is(again.headers.get('cache-control'), 'public, max-age=86400, immutable');
  assert.is(again.body.length, 0);
  assert.is(hits, before, 'no fetch for a 304');
  assert.ok(jobsBefore > 0);
  assert.is(jobsRun(await scrapeMetrics(server)), jobsBefore, 'no job for a 304');
});

/** Image jobs run so far, all endpoints (the job duration histogram's counts). */
function jobsRun(metrics: string): number {
  return [...metrics.matchAll(/^matte_job_duration_seconds_count\{[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

test('a background removal (options without operations): png with alpha, the subject kept', async () => {
  const r = await get(server.url, path({ input: `${base}/subject.png`, trim: true }));
  assert.is(r.status, 200, r.body.toString());
  assert.is(r.headers.get('content-type'), 'image/png');
  const image = await decode(r.body);
  assert.ok(image.hasAlpha);
  assert.ok(image.width < 64, 'trimmed to the subject');
  assert.ok(pixel(image, image.width >> 1, image.height >> 1)[3] > 200, 'the subject is opaque');
});

test('a signed background removal takes trim_margin and channels as the form does', async () => {
  const trimmed = await decode((await get(server.url, path({ input: `${base}/subject.png`, trim: true }))).body);
  const r = await get(server.url, path({ input: `${base}/subject.png`, trim: true, trim_margin: 5, channels: 'alpha' }));
  assert.is(r.status, 200, r.body.toString());
  const mask = await decode(r.body);
  assert.is(mask.width, trimmed.width + 10, 'five pixels a side');
  assert.is(mask.height, trimmed.height + 10);
  assert.is(r.body[25], 0, 'the matte alone: a greyscale PNG (colour type 0)');
  const noTrim = await get(server.url, sign(JSON.stringify({ input: `${base}/subject.png`, trim_margin: 5 }), 'png'));
  assert.is(noTrim.status, 400);
  assert.is(JSON.parse(noTrim.body.toString()).error.path, 'trim_margin');
  const tooWide = await get(server.url, sign(JSON.stringify({ input: `${base}/subject.png`, trim: true, trim_margin: '60%' }), 'png'));
  assert.is(tooWide.status, 400);
  assert.is(JSON.parse(tooWide.body.toString()).error.path, 'trim_margin');
});

test('a key being rotated out still signs', async () => {
  const url = signUrl({ input: `${base}/photo.png`, operations: [{ flip: 'h' }] }, { key: OLD_KEY });
  assert.is((await get(server.url, url)).status, 200);
});

test('403 before anything else: wrong key, changed options, changed format, no signature, a query', async () => {
  const good = path({ input: `${base}/photo.png`, operations: [{ resize: { width: 16 } }] });
  const [, , , signature, rest] = good.split('/');
  const [options] = rest!.split('.');
  const tampered = Buffer.from(JSON.stringify({ input: `${base}/photo.png`, operations: [{ resize: { width: 17 } }] })).toString('base64url');
  const before = hits;
  const bad = [
    signUrl({ input: `${base}/photo.png`, operations: [{ resize: { width: 16 } }] }, { key: 'another-key-0123456789abcdef0123456789' }),
    `/images/signed/${signature}/${tampered}.png`,
    `/images/signed/${signature}/${options}.webp`,
    `/images/signed/${options}.png`,
    `/images/signed/${'A'.repeat(43)}/${options}.png`,
    `/images/signed/${signature}/${options}.png?v=2`,
    // Malformed options under a wrong signature: never parsed (a 400 would say they were).
    `/images/signed/${signature}/not-base64-json.png`,
  ];
  for (const url of bad) {
    const r = await get(server.url, url);
    assert.is(r.status, 403, url);
    assert.is(r.json().error.code, 'invalid_signature');
  }
  assert.is(hits, before, 'no fetch for a 403');
});

test('signed answers are sent nosniff and sandboxed, as every other image answer', async () => {
  for (const url of [path({ input: `${base}/photo.png`, operations: [{ flip: 'v' }] }, 'png'), path({ input: `${base}/subject.png` }, 'webp')]) {
    const r = await get(server.url, url);
    assert.is(r.status, 200, r.body.toString());
    assert.is(r.headers.get('x-content-type-options'), 'nosniff', url);
    assert.is(r.headers.get('content-security-policy'), 'sandbox', url);
  }
});

test('a query or fragment marker on a signed path, however spelled, is 403 (a cache keyed on the raw URI would store copies)', async () => {
  const good = path({ input: `${base}/photo.png`, operations: [{ resize: { width: 12 } }] });
  const before = hits;
  const ask = async (target: string) => statusOf((await rawRequest(server.port, [`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`])).text);
  assert.is(await ask(good), 200, 'the URL as signed');
  const fetched = hits;
  for (const suffix of ['?', '?a=1', '#x', '?#y', '#', '??', '?%00', '%3F', '%3Fa=1', '%23x']) {
    assert.is(await ask(`${good}${suffix}`), 403, suffix);
  }
  assert.is(hits, fetched, 'no fetch for a 403');
  assert.ok(fetched > before);
});

test('signed but invalid options: 400 with the path; a format remove-background cannot give: 400', async () => {
  let r = await get(server.url, sign(JSON.stringify({ input: `${base}/p.png`, operations: [{ blur: 999 }] }), 'png'));
  assert.is(r.status, 400);
  assert.is(r.json().error.path, 'operations[0].blur');
  r = await get(server.url, sign('{not json', 'png'));
  assert.is(r.status, 400);
  assert.is(r.json().error.code, 'invalid_json');
  r = await get(server.url, sign(JSON.stringify({ input: `${base}/p.png` }), 'jpeg'));
  assert.is(r.status, 400);
  assert.is(r.json().error.path, 'format');
  r = await get(server.url, sign(JSON.stringify({ input: `${base}/p.png`, format: 'png' }), 'png'));
  assert.is(r.status, 400);
  assert.is(r.json().error.path, 'format');
  r = await get(server.url, sign(JSON.stringify({ input: 'file:///etc/passwd' }), 'png'));
  assert.is(r.status, 400);
  assert.is(r.json().error.path, 'input');
});

test('a model the server does not have: 400 before the source is fetched, for a removal, a matting edit and subject gravity', async () => {
  const before = hits;
  for (const options of [
    { input: `${base}/subject.png`, model: 'no-such-model' },
    { input: `${base}/subject.png`, operations: [{ removeBackground: { model: 'no-such-model' } }] },
    { input: `${base}/subject.png`, model: 'no-such-model', operations: [{ resize: { width: 32, height: 32, fit: 'cover', gravity: 'subject' } }] },
  ]) {
    const r = await get(server.url, sign(JSON.stringify(options), 'png'));
    assert.is(r.status, 400, JSON.stringify(options));
    assert.match(r.json().error.path, /model/);
  }
  assert.is(hits, before, 'no fetch for an unknown model');
});

test('signUrl refuses what the server would refuse', () => {
  assert.throws(() => signUrl({ input: `${base}/p.png`, operations: [{ blur: 999 } as never] }, { key: KEY }), /blur/);
  assert.throws(() => signUrl({ input: `${base}/p.png` }, { key: 'short' }), /at least 32/);
  assert.throws(() => signUrl({ input: `${base}/p.png` }, { key: KEY, format: 'gif' }), /png, webp/);
});

test('a URL the guard refuses is 400 like a POST (guard on)', async () => {
  const guarded = await startTestServer({ MATTE_URL_SIGNING_KEYS: KEY, MATTE_URL_PORTS: '*' });
  try {
    const r = await get(guarded.url, path({ input: `${base}/photo.png`, operations: [{ flip: 'h' }] }));
    assert.is(r.status, 400);
    assert.is(r.json().error.code, 'input_url_forbidden');
  } finally {
    await guarded.close();
  }
});

test('/metrics counts signed requests by outcome', async () => {
  const text = await scrapeMetrics(server);
  for (const outcome of ['200', '304', '403', 'error']) {
    assert.match(text, new RegExp(`matte_signed_requests_total\\{outcome="${outcome}"\\} [1-9]`), outcome);
  }
});

test('without MATTE_URL_SIGNING_KEYS the route is off: 404', async () => {
  const off = await startTestServer({});
  try {
    const r = await get(off.url, path({ input: `${base}/photo.png`, operations: [{ flip: 'h' }] }));
    assert.is(r.status, 404);
  } finally {
    await off.close();
  }
});

test.run();
