// run-tests: parallel
// imgproxy's, Cloudflare's and IPX's image URLs through the real server on loopback, made by the
// builders users run (@imgproxy/imgproxy-node 1.1.0, Nuxt Image 2.1.0's imgproxy, cloudflare and
// ipx providers), against a counting loopback origin (test/helpers/origin.ts). For a grid of
// widths, heights, fits, formats and qualities the answer has the size, format and crop window
// each dialect's documentation promises; a tampered or missing signature is 403 without a fetch;
// today's browsers' Accept headers get their format with Vary: Accept; a source outside
// MATTE_SOURCES is refused without a fetch; a repeat with the ETag is 304; segment=foreground
// makes a portrait's corners transparent; bad URLs are 4xx in the dialect's form, never a 500.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { generateImageUrl } from '@imgproxy/imgproxy-node';
import { imgproxySignature } from '../../server/foreign/imgproxy.js';
import { ACCEPT_HEADERS } from '../helpers/accept-headers.js';
import { fixture } from '../helpers/fixtures.js';
import { decode, formatOf, makePng, pixel, type Rgba } from '../helpers/images.js';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { get, rawRequest, startTestServer, statusOf, type TestServer } from '../helpers/server.js';

const KEY = 'a1'.repeat(32);
const SALT = 'b2'.repeat(16);
const pair = { key: Buffer.from(KEY, 'hex'), salt: Buffer.from(SALT, 'hex') };
const RED: Rgba = [255, 0, 0, 255];
const GREEN: Rgba = [0, 255, 0, 255];
const BLUE: Rgba = [0, 0, 255, 255];
const YELLOW: Rgba = [255, 255, 0, 255];
/** 200x100 in four quadrants: a crop window is told by the colours at its corners. */
const quadrants = makePng(200, 100, (x, y) => (y < 50 ? (x < 100 ? RED : GREEN) : x < 100 ? BLUE : YELLOW), { alpha: false });

let origin: Origin;
let server: TestServer;
type Provider = { getImage(src: string, options: Record<string, unknown>, ctx?: unknown): { url: string } };
let nuxt: Record<'imgproxy' | 'cloudflare' | 'ipx', Provider>;

async function provider(name: string): Promise<Provider> {
  const file = createRequire(import.meta.url).resolve('@nuxt/image').replace(/dist\/.*$/, `dist/runtime/providers/${name}.js`);
  return ((await import(pathToFileURL(file).href)) as { default: () => Provider }).default();
}

test.before(async () => {
  origin = await startOrigin({
    '/img/quad.png': { body: quadrants, etag: '"q1"' },
    '/img/portrait.png': { body: await readFile(await fixture('lenna.png')), etag: '"p1"' },
    '/private/secret.png': { body: quadrants },
  });
  server = await startTestServer({
    MATTE_IMGPROXY_KEY: KEY,
    MATTE_IMGPROXY_SALT: SALT,
    MATTE_SOURCE_BASE: `${origin.url}/img/`,
    MATTE_SOURCES: `${origin.url}/img/`,
    MATTE_ALLOW_PRIVATE_URLS: '1',
    MATTE_URL_PORTS: '*',
  });
  nuxt = { imgproxy: await provider('imgproxy'), cloudflare: await provider('cloudflare'), ipx: await provider('ipx') };
});

test.after(async () => {
  await server.close();
  await origin.close();
});

const pathOf = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};
const quad = () => `${origin.url}/img/quad.png`;

/** The colour nearest to `p` among the four quadrants'. */
function colourOf(p: Rgba): string {
  const names: Array<[string, Rgba]> = [['red', RED], ['green', GREEN], ['blue', BLUE], ['yellow', YELLOW]];
  return names.reduce((best, [name, c]) => (Math.hypot(p[0] - c[0], p[1] - c[1], p[2] - c[2]) < Math.hypot(p[0] - best[1][0], p[1] - best[1][1], p[2] - best[1][2]) ? [name, c] : best), names[0]!)[0];
}

interface Expected {
  width: number;
  height: number;
  format: string;
  /** The colours at the top-left, top-right, bottom-left and bottom-right corners. */
  corners?: string;
}

async function check(path: string, expected: Expected, headers: Record<string, string> = {}): Promise<Buffer> {
  const r = await get(server.url, path, { headers });
  assert.is(r.status, 200, `${path}: ${r.body.toString().slice(0, 200)}`);
  assert.is(formatOf(r.body), expected.format, path);
  assert.is(r.headers.get('content-type'), `image/${expected.format}`, path);
  const image = await decode(r.body);
  assert.is(`${image.width}x${image.height}`, `${expected.width}x${expected.height}`, path);
  if (expected.corners) {
    const inset = 3;
    const corners = [pixel(image, inset, inset), pixel(image, image.width - 1 - inset, inset), pixel(image, inset, image.height - 1 - inset), pixel(image, image.width - 1 - inset, image.height - 1 - inset)];
    assert.is(corners.map(colourOf).join(' '), expected.corners, path);
  }
  return r.body;
}

// ---- the grid, builder by builder ---------------------------------------------------------------

test('@imgproxy/imgproxy-node: sizes, fits, gravity, formats and the crop window', async () => {
  const url = (options: Record<string, unknown>, plain = false) =>
    pathOf(generateImageUrl({ endpoint: 'http://h', url: plain ? { value: quad(), displayAs: 'plain' } : quad(), options, key: KEY, salt: SALT }));
  const cases: Array<[Record<string, unknown>, Expected]> = [
    [{ width: 60, format: 'png' }, { width: 60, height: 30, format: 'png', corners: 'red green blue yellow' }],
    [{ width: 60, height: 40, format: 'webp' }, { width: 60, height: 30, format: 'webp' }],
    [{ resizing_type: 'fill', width: 60, height: 60, format: 'png' }, { width: 60, height: 60, format: 'png', corners: 'red green blue yellow' }],
    [{ resizing_type: 'fill', width: 50, height: 50, gravity: { type: 'we' }, format: 'png' }, { width: 50, height: 50, format: 'png', corners: 'red red blue blue' }],
    [{ resizing_type: 'fill', width: 50, height: 50, gravity: { type: 'ea' }, format: 'png' }, { width: 50, height: 50, format: 'png', corners: 'green green yellow yellow' }],
    [{ resizing_type: 'fill', width: 100, height: 20, gravity: { type: 'so' }, format: 'jpg' }, { width: 100, height: 20, format: 'jpeg', corners: 'blue yellow blue yellow' }],
    [{ resizing_type: 'fill', width: 40, height: 40, gravity: { type: 'fp', x: 0.9, y: 0.1 }, format: 'png' }, { width: 40, height: 40, format: 'png', corners: 'green green yellow yellow' }],
    [{ resizing_type: 'force', width: 50, height: 80, format: 'png' }, { width: 50, height: 80, format: 'png', corners: 'red green blue yellow' }],
    [{ width: 400, format: 'png' }, { width: 200, height: 100, format: 'png' }],
    [{ width: 400, enlarge: 1, format: 'png' }, { width: 400, height: 200, format: 'png' }],
    [{ resizing_type: 'fit', width: 80, height: 80, extend: { extend: 1 }, format: 'png' }, { width: 80, height: 80, format: 'png' }],
    [{ width: 50, dpr: 2, format: 'avif' }, { width: 100, height: 50, format: 'avif' }],
    [{ rotate: 90, width: 50, format: 'png' }, { width: 50, height: 100, format: 'png', corners: 'blue red yellow green' }],
    [{ padding: 10, width: 60, format: 'png' }, { width: 80, height: 50, format: 'png' }],
    [{ width: 60 }, { width: 60, height: 30, format: 'png' }], // no format: the source's
  ];
  for (const [options, expected] of cases) await check(url(options), expected);
  await check(url({ width: 60, format: 'webp' }, true), { width: 60, height: 30, format: 'webp' });
  // Quality is honoured.
  const low = await check(url({ width: 160, format: 'jpg', quality: 30 }), { width: 160, height: 80, format: 'jpeg' });
  const high = await check(url({ width: 160, format: 'jpg', quality: 95 }), { width: 160, height: 80, format: 'jpeg' });
  assert.ok(low.length < high.length);
});

test("Nuxt Image's imgproxy provider", async () => {
  const url = (modifiers: Record<string, unknown>) => pathOf(nuxt.imgproxy.getImage(quad(), { modifiers, baseURL: 'http://h', key: KEY, salt: SALT }).url);
  await check(url({ width: 60, height: 60, fit: 'cover', format: 'webp', quality: 70 }), { width: 60, height: 60, format: 'webp' });
  await check(url({ width: 80, height: 80, fit: 'contain', format: 'png' }), { width: 80, height: 80, format: 'png' });
  await check(url({ width: 50, height: 80, fit: 'fill', format: 'png' }), { width: 50, height: 80, format: 'png' });
  await check(url({ width: 80, height: 80, fit: 'inside', format: 'jpeg' }), { width: 80, height: 40, format: 'jpeg' });
  await check(url({ width: 120, format: 'avif' }), { width: 120, height: 60, format: 'avif' });
});

test("Nuxt Image's cloudflare provider and Next.js's loader", async () => {
  const url = (modifiers: Record<string, unknown>, src = '/quad.png') => pathOf(nuxt.cloudflare.getImage(src, { modifiers, baseURL: 'http://h' }).url);
  await check(url({ width: 60, format: 'png' }), { width: 60, height: 30, format: 'png', corners: 'red green blue yellow' });
  await check(url({ width: 400, format: 'png' }), { width: 200, height: 100, format: 'png' }); // scale-down: never enlarged
  await check(url({ width: 400, fit: 'contain', format: 'png' }), { width: 400, height: 200, format: 'png' });
  await check(url({ width: 50, height: 50, fit: 'cover', format: 'webp', quality: 60 }), { width: 50, height: 50, format: 'webp' });
  await check(url({ width: 50, height: 50, fit: 'cover', gravity: 'left', format: 'png' }), { width: 50, height: 50, format: 'png', corners: 'red red blue blue' });
  await check(url({ width: 50, height: 50, fit: 'outside', gravity: 'right', format: 'png' }), { width: 50, height: 50, format: 'png', corners: 'green green yellow yellow' });
  await check(url({ width: 80, height: 80, fit: 'inside', format: 'png' }), { width: 80, height: 80, format: 'png' }); // pad
  await check(url({ width: 60, format: 'jpeg' }, quad()), { width: 60, height: 30, format: 'jpeg' }); // an absolute source under MATTE_SOURCES
  await check(url({ height: 20, dpr: 2, format: 'avif' }), { width: 80, height: 40, format: 'avif' });
  // Next.js's documented loader: width, quality, format=auto; Chrome's Accept gives AVIF.
  await check(`/cdn-cgi/image/width=64,quality=75,format=auto/quad.png`, { width: 64, height: 32, format: 'avif' }, { Accept: ACCEPT_HEADERS.chrome });
  // Cloudflare's own order: trim before the resize, flip before rotate.
  await check(`/cdn-cgi/image/trim=0;100;50;0,width=50,format=png/quad.png`, { width: 50, height: 25, format: 'png', corners: 'red red red red' });
  await check(`/cdn-cgi/image/rotate=90,flip=h,format=png/quad.png`, { width: 100, height: 200, format: 'png', corners: 'yellow green blue red' });
});

test("Nuxt Image's ipx provider", async () => {
  const url = (modifiers: Record<string, unknown>, src = '/quad.png') => pathOf(nuxt.ipx.getImage(src, { modifiers, baseURL: 'http://h/_ipx' }, {}).url);
  await check(url({ width: 60, format: 'png' }), { width: 60, height: 30, format: 'png', corners: 'red green blue yellow' });
  await check(url({ width: 400, format: 'png' }), { width: 200, height: 100, format: 'png' }); // no enlarge unless asked
  await check(url({ width: 50, height: 50, format: 'webp', quality: 70 }), { width: 50, height: 50, format: 'webp' }); // s_, cover
  await check(url({ width: 50, height: 50, position: 'left', format: 'png' }), { width: 50, height: 50, format: 'png', corners: 'red red blue blue' });
  // contain: letterboxed in the background (the box's top and bottom rows white), the image whole between.
  const boxed = await decode(await check(url({ width: 80, height: 80, fit: 'contain', background: 'fff', format: 'png' }), { width: 80, height: 80, format: 'png' }));
  assert.equal(pixel(boxed, 40, 5), [255, 255, 255, 255]);
  assert.is(colourOf(pixel(boxed, 5, 25)), 'red');
  assert.is(colourOf(pixel(boxed, 75, 55)), 'yellow');
  await check(url({ width: 50, height: 80, fit: 'fill', format: 'png' }), { width: 50, height: 80, format: 'png', corners: 'red green blue yellow' });
  await check(url({ width: 60, format: 'jpeg' }, quad()), { width: 60, height: 30, format: 'jpeg' });
  await check(url({ width: 60 }), { width: 60, height: 30, format: 'png' }); // no format: the source's
  await check(url({ width: 64, format: 'auto' }), { width: 64, height: 32, format: 'webp' }, { Accept: ACCEPT_HEADERS.safari15 });
});

test("a box larger than the image: imgproxy's fill-down and IPX's s_ keep the box's aspect", async () => {
  // The 200x100 source into 300x300: the box shrinks by 1/3 to 100x100, the window of the image as it is.
  const imgproxy = (options: Record<string, unknown>) => pathOf(generateImageUrl({ endpoint: 'http://h', url: quad(), options, key: KEY, salt: SALT }));
  await check(imgproxy({ resizing_type: 'fill-down', width: 300, height: 300, format: 'png' }), { width: 100, height: 100, format: 'png', corners: 'red green blue yellow' });
  await check(imgproxy({ resizing_type: 'fill-down', width: 300, height: 300, gravity: { type: 'we' }, format: 'png' }), { width: 100, height: 100, format: 'png', corners: 'red red blue blue' });
  await check(imgproxy({ resizing_type: 'fill-down', width: 600, height: 200, format: 'png' }), { width: 200, height: 67, format: 'png' });
  // fill crops the projecting parts only; enlarge makes fill-down a cover of the box.
  await check(imgproxy({ resizing_type: 'fill', width: 300, height: 300, format: 'png' }), { width: 200, height: 100, format: 'png' });
  await check(imgproxy({ resizing_type: 'fill-down', width: 300, height: 300, enlarge: 1, format: 'png' }), { width: 300, height: 300, format: 'png' });
  const ipx = (modifiers: Record<string, unknown>) => pathOf(nuxt.ipx.getImage('/quad.png', { modifiers, baseURL: 'http://h/_ipx' }, {}).url);
  await check(ipx({ width: 300, height: 300, format: 'png' }), { width: 100, height: 100, format: 'png', corners: 'red green blue yellow' });
  await check(ipx({ width: 300, height: 300, position: 'right', format: 'png' }), { width: 100, height: 100, format: 'png', corners: 'green green yellow yellow' });
  // fill: the image stretched to the shrunk box (400x150 by 1/2).
  await check(ipx({ width: 400, height: 150, fit: 'fill', format: 'png' }), { width: 200, height: 75, format: 'png', corners: 'red green blue yellow' });
  await check(`/_ipx/s_300x300,enlarge,f_png/quad.png`, { width: 300, height: 300, format: 'png' });
});

// ---- formats by Accept --------------------------------------------------------------------------

test("every browser's Accept gets its format, with Vary: Accept", async () => {
  const expected: Record<keyof typeof ACCEPT_HEADERS, string> = { chrome: 'avif', chromeTab: 'avif', firefox: 'avif', firefox115: 'avif', safari17: 'avif', safari15: 'webp', curl: 'jpeg' };
  for (const [browser, accept] of Object.entries(ACCEPT_HEADERS) as Array<[keyof typeof ACCEPT_HEADERS, string]>) {
    for (const path of ['/cdn-cgi/image/width=40,format=auto/quad.png', '/_ipx/w_40,f_auto/quad.png']) {
      const r = await get(server.url, path, { headers: { Accept: accept } });
      assert.is(r.status, 200, `${browser} ${path}`);
      assert.is(formatOf(r.body), expected[browser], `${browser} ${path}`);
      assert.match(r.headers.get('vary') ?? '', /Accept/i, `${browser} ${path}`);
    }
  }
  const fixed = await get(server.url, '/cdn-cgi/image/width=40,format=webp/quad.png', { headers: { Accept: ACCEPT_HEADERS.chrome } });
  assert.is(fixed.headers.get('vary'), null, 'a format the URL names does not vary');
});

// ---- signatures and sources: refused before any fetch -------------------------------------------

test('imgproxy: a tampered or missing signature is 403 without a fetch', async () => {
  const good = pathOf(generateImageUrl({ endpoint: 'http://h', url: quad(), options: { width: 30, format: 'png' }, key: KEY, salt: SALT }));
  const before = origin.requests;
  const bad = [
    good.replace('w:30', 'w:31'),
    good.replace(/^\/[^/]+/, '/insecure'),
    good.replace(/^\/[^/]+/, '/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'),
    good.replace(/^\/[^/]+\//, '/'),
    `${good}?x=1`.replace(/^\/[^/]+/, '/x'),
  ];
  for (const path of bad) {
    const r = await get(server.url, path);
    assert.is(r.status, 403, path);
    assert.is(r.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.match(r.body.toString(), /^Forbidden/);
  }
  assert.is(origin.requests, before, 'the origin was never asked');
  assert.is((await get(server.url, good)).status, 200);
});

test('a source outside MATTE_SOURCES (or MATTE_SOURCE_BASE) is refused without a fetch', async () => {
  const before = origin.requests;
  const cases: Array<[string, number]> = [
    [`/cdn-cgi/image/width=40/${origin.url}/private/secret.png`, 403],
    [`/_ipx/w_40/${origin.url}/private/secret.png`, 403],
    [pathOf(generateImageUrl({ endpoint: 'http://h', url: `${origin.url}/private/secret.png`, options: { width: 40 }, key: KEY, salt: SALT })), 404],
  ];
  for (const [path, status] of cases) assert.is((await get(server.url, path)).status, status, path);
  const cf = await get(server.url, cases[0]![0]);
  assert.is(cf.headers.get('cf-resized'), 'err=9406');
  // A path that climbs out of MATTE_SOURCE_BASE, sent as written (fetch() would resolve its `..`).
  const climb = await rawRequest(server.port, ['GET /cdn-cgi/image/width=40/../private/secret.png HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']);
  assert.is(statusOf(climb.text), 403);
  assert.is(origin.requests, before, 'the origin was never asked');
});

test('the unsigned dialects are off without MATTE_SOURCES or MATTE_SOURCE_BASE; imgproxy without a key', async () => {
  const s = await startTestServer({ MATTE_ALLOW_PRIVATE_URLS: '1' });
  try {
    assert.is((await get(s.url, '/cdn-cgi/image/width=40/quad.png')).status, 404);
    assert.is((await get(s.url, '/_ipx/w_40/quad.png')).status, 404);
    assert.is((await get(s.url, '/x/w:40/plain/http://a/b.png')).status, 404);
  } finally {
    await s.close();
  }
});

test("imgproxy at the root leaves matte's own routes alone; MATTE_IMGPROXY_PREFIX moves it", async () => {
  assert.is((await get(server.url, '/healthz')).status, 200);
  const paths = Object.keys((await get(server.url, '/openapi.json')).json().paths);
  for (const path of ['/cdn-cgi/image/{options}/{source}', '/_ipx/{modifiers}/{source}', '/{signature}/{options}/{source}']) assert.ok(paths.includes(path), path);
  assert.is((await get(server.url, '/images/edit')).status, 405);
  const s = await startTestServer({ MATTE_IMGPROXY_KEY: KEY, MATTE_IMGPROXY_SALT: SALT, MATTE_IMGPROXY_PREFIX: '/imgproxy', MATTE_ALLOW_PRIVATE_URLS: '1', MATTE_URL_PORTS: '*' });
  try {
    const path = pathOf(generateImageUrl({ endpoint: 'http://h', url: quad(), options: { width: 30, format: 'png' }, key: KEY, salt: SALT }));
    assert.is((await get(s.url, path)).status, 404, 'not at the root');
    const r = await get(s.url, `/imgproxy${path}`);
    assert.is(r.status, 200, r.body.toString());
    assert.is(r.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  } finally {
    await s.close();
  }
});

// ---- caching ------------------------------------------------------------------------------------

test('a repeat with the ETag is 304, in every dialect', async () => {
  const paths = [
    pathOf(generateImageUrl({ endpoint: 'http://h', url: quad(), options: { width: 44, format: 'png' }, key: KEY, salt: SALT })),
    '/cdn-cgi/image/width=44,format=png/quad.png',
    '/_ipx/w_44,f_png/quad.png',
  ];
  for (const path of paths) {
    const first = await get(server.url, path);
    const etag = first.headers.get('etag')!;
    assert.match(etag, /^"[A-Za-z0-9_-]{32}"$/, path);
    const again = await get(server.url, path, { headers: { 'If-None-Match': etag } });
    assert.is(again.status, 304, path);
    assert.is(again.body.length, 0);
  }
  assert.is((await get(server.url, paths[1]!)).headers.get('cache-control'), 'public, max-age=3600');
});

// ---- background removal -------------------------------------------------------------------------

test('segment=foreground: a portrait with transparent corners', async () => {
  const r = await get(server.url, '/cdn-cgi/image/width=256,segment=foreground,format=png/portrait.png');
  assert.is(r.status, 200, r.body.toString());
  const image = await decode(r.body);
  assert.is(image.width, 256);
  assert.ok(image.hasAlpha);
  for (const [x, y] of [[2, 2], [253, 2]] as const) assert.ok(pixel(image, x, y)[3] < 32, `corner ${x},${y} alpha ${pixel(image, x, y)[3]}`);
  assert.ok(pixel(image, 128, 128)[3] > 200, 'the subject stays');
});

// ---- bad URLs -----------------------------------------------------------------------------------

test("bad URLs are 4xx in each dialect's form, never a 500", async () => {
  const signed = (rest: string) => `/${imgproxySignature(pair, rest, 32)}${rest}`;
  const imgproxy: string[] = [signed('/nope:1/aHR0cDovL2EvYi5wbmc'), signed('/w:0/!!notbase64!!'), signed('/w:abc/aHR0cDovL2EvYi5wbmc'), signed('/rs:fit:10:10/'), signed('/w:10/_w8_')];
  for (const path of imgproxy) {
    const r = await get(server.url, path);
    assert.is(r.status, 404, path);
    assert.match(r.body.toString(), /^Invalid (source )?URL/, path);
  }
  for (const path of ['/cdn-cgi/image/width=0/quad.png', '/cdn-cgi/image/nope=1/quad.png', '/cdn-cgi/image/width/quad.png', '/cdn-cgi/image/width=10001/quad.png', '/cdn-cgi/image//quad.png']) {
    const r = await get(server.url, path);
    assert.is(r.status, 400, path);
    assert.is(r.headers.get('cf-resized'), 'err=9401', path);
    assert.match(r.body.toString(), /^ERROR 9401: /, path);
  }
  for (const path of ['/_ipx/w_0/quad.png', '/_ipx/nope_1/quad.png', '/_ipx/s_10y10/quad.png', '/_ipx/w_10/']) {
    const r = await get(server.url, path);
    assert.is(r.status, 400, path);
    assert.match(r.json().error.message, /^\[400\] \[IPX_/, path);
  }
  const missing = await get(server.url, '/cdn-cgi/image/width=10/missing.png');
  assert.is(missing.status, 404);
  assert.is(missing.headers.get('cf-resized'), 'err=9404');
});

test.run();
