// run-tests: parallel
// The staged cut-outs through real HTTP on loopback (docs/api.md, "Extensions: staged cut-outs"):
// background_image as a file or a URL (through the same fetcher and guard as input), the
// remove-background endpoint's staging fields, format auto, and every bad value a 400 (or the
// input's own 413/415) with its path.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { classifyAddress } from '../../server/input/address-guard.js';
import { decode, disc, formatOf, gradient, makePng, solid } from '../helpers/images.js';
import { post, startTestServer, type Reply, type TestServer } from '../helpers/server.js';

const input = disc(160, 120, 36, [220, 30, 30], [255, 255, 255], { alpha: false });
const backdrop = gradient(80, 60);
const cutout = disc(60, 40, 12, [200, 10, 10, 255], [0, 0, 0, 0]);

let open: TestServer; // the address guard off
let guarded: TestServer;
let small: TestServer; // MATTE_MAX_INPUT_BYTES small
let origin: { server: http.Server; base: string };

test.before(async () => {
  const server = http.createServer((req, res) => {
    if (req.url === '/backdrop.png') {
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': backdrop.length });
      res.end(backdrop);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  origin = await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
  open = await startTestServer({ MATTE_ALLOW_PRIVATE_URLS: '1', MATTE_URL_PORTS: '*' });
  guarded = await startTestServer({ MATTE_URL_PORTS: '*' }, { isAllowedAddress: (a) => classifyAddress(a).allowed });
  small = await startTestServer({ MATTE_MAX_INPUT_BYTES: String(input.length + 2000) });
});
test.after(async () => {
  await Promise.all([open.close(), guarded.close(), small.close()]);
  origin.server.close();
});

function assertError(reply: Reply, status: number, code: string, path: string) {
  assert.is(reply.status, status, reply.body.toString());
  const body = reply.json();
  assert.is(body.error.code, code, reply.body.toString());
  assert.is(body.error.path, path, reply.body.toString());
}

const rb = (server: TestServer, fields: Record<string, string | Buffer>) => post(server.url, '/images/remove-background', { input, output: 'raw', ...fields });
const edit = (server: TestServer, fields: Record<string, string | Buffer>) => post(server.url, '/images/edit', { input: cutout, output: 'raw', ...fields });

test('remove-background: a background image file, a shadow and format auto give an opaque JPEG of the input\'s size', async () => {
  const r = await rb(open, { background_image: backdrop, shadow: 'true', format: 'auto' });
  assert.is(r.status, 200, r.body.toString());
  assert.is(r.headers.get('content-type'), 'image/jpeg');
  assert.is(formatOf(r.body), 'jpeg');
  assert.equal([r.headers.get('x-image-width'), r.headers.get('x-image-height')], ['160', '120']);
  // Without staging, auto is a PNG (the cut-out is transparent).
  const plain = await rb(open, { format: 'auto' });
  assert.is(plain.headers.get('content-type'), 'image/png');
  const stored = await post(open.url, '/images/remove-background', { input, background: '#fff', format: 'auto' });
  assert.match(stored.json().url, /\.jpeg$/);
});

test('remove-background: size, place, roi and semitransparency as form fields', async () => {
  const r = await rb(open, { size: '0.01', place: '{"scale":80,"aspectRatio":"1:1"}', roi: '0 0 50% 100%', semitransparency: 'false' });
  assert.is(r.status, 200, r.body.toString());
  const w = Number(r.headers.get('x-image-width')), h = Number(r.headers.get('x-image-height'));
  assert.ok(w * h <= 10_000 && w === h, `${w}x${h}`);
  const image = await decode(r.body);
  const values = new Set<number>();
  for (let i = 0; i < w * h; i++) values.add(image.data[i * 4 + 3]!);
  assert.ok(values.has(0) && values.has(255));
});

test('edit: background_image as a URL is fetched through the input\'s fetcher; the guard refuses a private address', async () => {
  const ops = JSON.stringify([{ backgroundImage: true }]);
  const r = await edit(open, { operations: ops, background_image: `${origin.base}/backdrop.png`, format: 'auto' });
  assert.is(r.status, 200, r.body.toString());
  assert.is(r.headers.get('content-type'), 'image/jpeg');
  assertError(await edit(guarded, { operations: ops, background_image: `${origin.base}/backdrop.png` }), 400, 'input_url_forbidden', 'background_image');
  assertError(await edit(open, { operations: ops, background_image: 'ftp://example.com/a.png' }), 400, 'invalid_field', 'background_image');
  assertError(await edit(open, { operations: ops, background_image: `${origin.base}/missing.png` }), 422, 'input_url_fetch_failed', 'background_image');
});

test('a background image that is not an image, too large, or missing its operation is refused with its path', async () => {
  const ops = JSON.stringify([{ backgroundImage: true }]);
  assertError(await edit(open, { operations: ops, background_image: Buffer.from('not an image at all') }), 415, 'unsupported_image', 'background_image');
  // Each alone within the limit, together over it.
  const noisy = makePng(40, 40, (x, y) => [(x * 97 + y * 31) % 256, (x * y * 13) % 256, (x * 7 + y * 101) % 256], { alpha: false });
  assert.ok(noisy.length > 2000 && noisy.length < input.length + 2000);
  assertError(await rb(small, { background_image: noisy }), 413, 'input_too_large', 'background_image');
  assertError(await edit(open, { operations: ops }), 400, 'invalid_operations', 'operations[0].backgroundImage');
  assertError(await edit(open, { operations: '[{"flip":"h"}]', background_image: backdrop }), 400, 'invalid_field', 'background_image');
  assertError(await rb(open, { background: '#fff', background_image: backdrop }), 400, 'invalid_field', 'background_image');
  assertError(await rb(open, { channels: 'alpha', shadow: 'true' }), 400, 'invalid_field', 'shadow');
});

test('bad staging values: 400 with their path, before the input is touched', async () => {
  assertError(await rb(open, { size: 'huge' }), 400, 'invalid_field', 'size');
  assertError(await rb(open, { size: '101' }), 400, 'invalid_field', 'size');
  assertError(await rb(open, { place: '{"scale":150}' }), 400, 'invalid_field', 'place');
  assertError(await rb(open, { place: '{"scale":0}' }), 400, 'invalid_field', 'place');
  assertError(await rb(open, { place: 'not json' }), 400, 'invalid_field', 'place');
  assertError(await rb(open, { roi: '0 0 10' }), 400, 'invalid_field', 'roi');
  assertError(await rb(open, { shadow: '{"opacity":3}' }), 400, 'invalid_field', 'shadow');
  assertError(await rb(open, { semitransparency: 'maybe' }), 400, 'invalid_field', 'semitransparency');
  assertError(await rb(open, { format: 'gif' }), 400, 'invalid_field', 'format');
  // Known only from the image's header: still before any pixel.
  assertError(await rb(open, { roi: '0 0 500 10' }), 400, 'invalid_operations', 'roi');
  assertError(await edit(open, { operations: '[{"place":{"scale":5}}]' }), 400, 'invalid_operations', 'operations[0].place.scale');
  assertError(await edit(open, { operations: '[{"size":"small"}]' }), 400, 'invalid_operations', 'operations[0].size');
  // Unknown on the edit endpoint: the staging is operations there.
  assertError(await edit(open, { operations: '[{"flip":"h"}]', shadow: 'true' }), 400, 'unknown_field', 'shadow');
});

test('edit: format auto is PNG with transparency and JPEG without', async () => {
  const transparent = await edit(open, { operations: '[{"shadow":true}]', format: 'auto' });
  assert.is(transparent.headers.get('content-type'), 'image/png');
  const opaque = await post(open.url, '/images/edit', { input: solid(20, 20, [1, 2, 3]), operations: '[{"flip":"h"}]', format: 'auto', output: 'raw' });
  assert.is(opaque.headers.get('content-type'), 'image/jpeg');
});

test.run();
