// run-tests: parallel
// URL input: fetched from a local HTTP server on loopback with the guard off; with the guard on,
// every loopback spelling and a redirect to loopback are refused. No request ever leaves loopback:
// the refused URLs are loopback ones, and the guard refuses them before connecting.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { classifyAddress } from '../../server/input/address-guard.js';
import { decode, gradient } from '../helpers/images.js';
import { post, startTestServer, type TestServer } from '../helpers/server.js';

const png = gradient(40, 30);
let hits: string[] = [];

/** The origin: /img.png, /redirect/N (N hops then the image), /status/404, /big, /hang, /text. */
function origin(host: string): Promise<{ server: http.Server; base: string }> {
  const server = http.createServer((req, res) => {
    hits.push(`${host}${req.url}`);
    const url = new URL(req.url ?? '/', 'http://x');
    const redirect = /^\/redirect\/(\d+)$/.exec(url.pathname);
    if (url.pathname === '/img.png') {
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': png.length });
      res.end(png);
    } else if (redirect) {
      const left = Number(redirect[1]);
      res.writeHead(302, { Location: left > 1 ? `/redirect/${left - 1}` : '/img.png' });
      res.end();
    } else if (url.pathname === '/to') {
      res.writeHead(301, { Location: url.searchParams.get('u') ?? '/' });
      res.end();
    } else if (url.pathname === '/status/404') {
      res.writeHead(404);
      res.end('no');
    } else if (url.pathname === '/big') {
      res.writeHead(200, { 'Content-Type': 'image/png' }); // no length: capped while streaming
      const block = Buffer.alloc(64 * 1024, 1);
      let sent = 0;
      const pump = () => {
        while (sent < 4 * 1024 * 1024 && !res.destroyed) {
          sent += block.length;
          if (!res.write(block)) return res.once('drain', pump);
        }
        res.end();
      };
      pump();
    } else if (url.pathname === '/big-declared') {
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': 10 * 1024 * 1024 });
      res.end();
    } else if (url.pathname === '/hang') {
      // never answers
    } else if (url.pathname === '/text') {
      res.writeHead(200, { 'Content-Type': 'image/png' });
      res.end('this is not an image');
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  return new Promise((resolve) => server.listen(0, host, () => resolve({ server, base: `http://${host}:${(server.address() as AddressInfo).port}` })));
}

let open: TestServer; // guard off
let guarded: TestServer; // guard on; 127.0.0.2 stands in for a public host
let local: { server: http.Server; base: string };
let publicStandIn: { server: http.Server; base: string };

test.before(async () => {
  local = await origin('127.0.0.1');
  publicStandIn = await origin('127.0.0.2');
  open = await startTestServer({ MATTE_ALLOW_PRIVATE_URLS: '1', MATTE_URL_PORTS: '*', MATTE_MAX_INPUT_BYTES: '1000000', MATTE_URL_FETCH_TIMEOUT_SECONDS: '1' });
  guarded = await startTestServer({ MATTE_URL_PORTS: '*' }, { isAllowedAddress: (a) => a === '127.0.0.2' || classifyAddress(a).allowed });
});
test.after(async () => {
  await open.close();
  await guarded.close();
  local.server.closeAllConnections();
  local.server.close();
  publicStandIn.server.close();
});

const edit = (server: TestServer, input: string, extra: Record<string, string> = {}) => post(server.url, '/images/edit', { input, operations: '[{"rotate":90}]', output: 'raw', ...extra });

// ---- guard off ---------------------------------------------------------------------------------------

test('guard off: an image URL on a local server is fetched and edited', async () => {
  const r = await edit(open, `${local.base}/img.png`);
  assert.is(r.status, 200, r.body.toString());
  const image = await decode(r.body);
  assert.is(image.width, 30);
  assert.is(image.height, 40);
});

test('guard off: remove-background takes a URL too (url output)', async () => {
  const r = await post(open.url, '/images/remove-background', { input: `${local.base}/img.png` });
  assert.is(r.status, 200, r.body.toString());
  assert.match(r.json().url, /\.png$/);
});

test('guard off: 3 redirects are followed', async () => {
  assert.is((await edit(open, `${local.base}/redirect/3`)).status, 200);
});

test('guard off: more than 3 redirects is 422 input_url_fetch_failed', async () => {
  const r = await edit(open, `${local.base}/redirect/4`);
  assert.is(r.status, 422);
  assert.is(r.json().error.code, 'input_url_fetch_failed');
  assert.is(r.json().error.path, 'input');
});

test('guard off: a non-2xx answer, a closed port and a timeout are 422', async () => {
  for (const url of [`${local.base}/status/404`, 'http://127.0.0.1:1/img.png', `${local.base}/hang`]) {
    const started = Date.now();
    const r = await edit(open, url);
    assert.is(r.status, 422, `${url}: ${r.body}`);
    assert.is(r.json().error.code, 'input_url_fetch_failed');
    assert.ok(Date.now() - started < 3000, url);
  }
});

test('guard off: a body over the size limit is 413 input_too_large (streamed or declared)', async () => {
  for (const path of ['/big', '/big-declared']) {
    const r = await edit(open, `${local.base}${path}`);
    assert.is(r.status, 413, path);
    assert.is(r.json().error.code, 'input_too_large');
  }
});

test('guard off: a URL whose body is not an image is 415', async () => {
  const r = await edit(open, `${local.base}/text`);
  assert.is(r.status, 415);
  assert.is(r.json().error.code, 'unsupported_image');
});

// ---- guard on -------------------------------------------------------------------------------------------

test('guard on: every loopback spelling is 400 input_url_forbidden, and nothing is fetched', async () => {
  const port = new URL(local.base).port;
  hits = [];
  for (const host of ['127.0.0.1', 'localhost', '[::1]', '[::ffff:127.0.0.1]', '2130706433', '0x7f.1', '127.1', '[::ffff:7f00:1]', '0.0.0.0']) {
    for (const path of ['/images/edit', '/images/remove-background']) {
      const fields: Record<string, string> = path === '/images/edit' ? { input: `http://${host}:${port}/img.png`, operations: '[{"flip":"h"}]' } : { input: `http://${host}:${port}/img.png` };
      const r = await post(guarded.url, path, fields);
      assert.is(r.status, 400, `${host}: ${r.body}`);
      assert.is(r.json().error.code, 'input_url_forbidden');
      assert.is(r.json().error.path, 'input');
    }
  }
  assert.equal(hits, []);
});

test('guard on: an allowed host is fetched (the stand-in), a redirect from it to loopback is refused', async () => {
  hits = [];
  assert.is((await edit(guarded, `${publicStandIn.base}/img.png`)).status, 200);
  const target = encodeURIComponent(`${local.base}/img.png`);
  const r = await edit(guarded, `${publicStandIn.base}/to?u=${target}`);
  assert.is(r.status, 400, r.body.toString());
  assert.is(r.json().error.code, 'input_url_forbidden');
  const viaName = await edit(guarded, `${publicStandIn.base}/to?u=${encodeURIComponent(`http://localhost:${new URL(local.base).port}/img.png`)}`);
  assert.is(viaName.status, 400);
  // the loopback origin never saw a request
  assert.ok(hits.every((h) => h.startsWith('127.0.0.2')), hits.join(' '));
});

test('guard on: a redirect to another scheme is 422', async () => {
  const r = await edit(guarded, `${publicStandIn.base}/to?u=${encodeURIComponent('file:///etc/passwd')}`);
  assert.is(r.status, 422);
});

test.run();
