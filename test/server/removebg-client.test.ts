// run-tests: parallel
// remove.bg's official Node client (npm remove.bg), unchanged, against matte: it calls
// https://api.remove.bg, which the test gives it on loopback (a CONNECT proxy and a CA made for the
// test, test/helpers/removebg-front.ts), and what it writes to disk is checked: file, URL and base64
// inputs, size, crop, bg_color, format (auto: what the client leaves unset) and channels. Every
// request it sends and every answer it gets are checked against remove.bg's OpenAPI document.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { decode, disc, distance, isPng, pixel } from '../helpers/images.js';
import { startTestServer, TEST_KEY, tempDir, type TestServer } from '../helpers/server.js';
import { REMOVEBG_HOST, startRemoveBgFront, type RemoveBgFront } from '../helpers/removebg-front.js';
import { runClient, type ClientCall } from '../helpers/removebg-client.js';

const RED: [number, number, number] = [220, 30, 30];
const photo = disc(800, 600, 160, RED, [255, 255, 255], { alpha: false });
let server: TestServer;
let front: RemoveBgFront;
let origin: http.Server;
let originUrl = '';
let dir = '';

test.before(async () => {
  origin = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'image/png' }).end(photo));
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', () => r()));
  originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/photo.png`;
  // The client's image_url is fetched by matte from loopback: the URL guard is off here.
  server = await startTestServer({ MATTE_ALLOW_PRIVATE_URLS: '1', MATTE_URL_PORTS: '*' });
  front = await startRemoveBgFront(server.url);
  dir = await tempDir('matte-removebg-client-');
  await writeFile(join(dir, 'photo.png'), photo);
});
test.after(async () => {
  await front.close();
  await server.close();
  origin.close();
  await rm(dir, { recursive: true, force: true });
});

/** One call of the client; returns what it resolved with and the file it wrote, checking its exchange. */
async function call(name: ClientCall, options: Record<string, unknown>): Promise<{ result: Record<string, unknown>; written: Buffer }> {
  const outputFile = join(dir, `out-${front.exchanges.length}`);
  const before = front.exchanges.length;
  const outcome = await runClient(front, name, { apiKey: TEST_KEY, outputFile, ...options });
  assert.ok(outcome.ok, `the client failed: ${JSON.stringify(outcome)}`);
  assert.is(front.exchanges.length, before + 1, 'one request, through api.remove.bg');
  const exchange = front.exchanges[before]!;
  assert.equal(exchange.requestErrors, [], 'the request against the document');
  assert.equal(exchange.responseErrors, [], 'the answer against the document');
  return { result: (outcome as { result: Record<string, unknown> }).result, written: await readFile(outputFile) };
}

test('from a file (a multipart upload): the preview PNG with transparency on disk, and the headers it reports', async () => {
  const { result, written } = await call('removeBackgroundFromImageFile', { path: join(dir, 'photo.png') });
  assert.ok(isPng(written));
  const image = await decode(written);
  assert.equal([image.width, image.height], [577, 433], 'size=preview, the client\'s default');
  assert.is(pixel(image, 2, 2)[3], 0);
  assert.ok(distance(pixel(image, 288, 216), [...RED, 255]) <= 2);
  assert.equal([result.resultWidth, result.resultHeight, result.creditsCharged], ['577', '433', '0']);
  assert.is(result.detectedType, undefined, 'type=auto: no X-Type');
  assert.ok(front.tunnels.every((t) => t === `${REMOVEBG_HOST}:443`), `tunnels: ${front.tunnels}`);
});

test('from a URL (JSON, fetched by matte through its URL guard) at size=full, type=person', async () => {
  const { result, written } = await call('removeBackgroundFromImageUrl', { url: originUrl, size: 'full', type: 'person' });
  const image = await decode(written);
  assert.equal([image.width, image.height], [800, 600]);
  assert.equal([result.resultWidth, result.detectedType], ['800', 'person']);
});

test('from base64 (JSON) with crop and crop_margin: the subject\'s box plus the margin', async () => {
  const full = await decode((await call('removeBackgroundFromImageBase64', { base64img: photo.toString('base64'), size: 'full' })).written);
  const { written } = await call('removeBackgroundFromImageBase64', { base64img: photo.toString('base64'), size: 'full', crop: true, crop_margin: '10px' });
  const cropped = await decode(written);
  let x0 = full.width, x1 = -1, y0 = full.height, y1 = -1;
  for (let y = 0; y < full.height; y++) for (let x = 0; x < full.width; x++) if (pixel(full, x, y)[3] > 0) (x0 = Math.min(x0, x)), (x1 = Math.max(x1, x)), (y0 = Math.min(y0, y)), (y1 = Math.max(y1, y));
  assert.equal([cropped.width, cropped.height], [x1 - x0 + 1 + 20, y1 - y0 + 1 + 20]);
});

test('bg_color: format auto gives a JPEG over the colour', async () => {
  const { written } = await call('removeBackgroundFromImageFile', { path: join(dir, 'photo.png'), bg_color: '81d4fa' });
  assert.equal([...written.subarray(0, 3)], [0xff, 0xd8, 0xff], 'a JPEG');
  const image = await decode(written);
  assert.ok(distance(pixel(image, 3, 3), [0x81, 0xd4, 0xfa, 255]) <= 3, `${pixel(image, 3, 3)}`);
  assert.ok(distance(pixel(image, 288, 216), [...RED, 255]) <= 8, `${pixel(image, 288, 216)}`);
});

test('channels=alpha: the matte alone, a greyscale PNG', async () => {
  const cutout = await decode((await call('removeBackgroundFromImageFile', { path: join(dir, 'photo.png') })).written);
  const { written } = await call('removeBackgroundFromImageFile', { path: join(dir, 'photo.png'), channels: 'alpha' });
  assert.ok(isPng(written) && written[25] === 0, 'a greyscale PNG');
  const mask = await decode(written);
  for (let i = 0; i < mask.width * mask.height; i++) {
    if (mask.data[i * 4] !== cutout.data[i * 4 + 3]) assert.unreachable(`pixel ${i}: mask ${mask.data[i * 4]}, alpha ${cutout.data[i * 4 + 3]}`);
  }
});

test("the client's errors: matte's 400 in remove.bg's shape reaches it as remove.bg's would", async () => {
  const before = front.exchanges.length;
  const outcome = await runClient(front, 'removeBackgroundFromImageBase64', { apiKey: TEST_KEY, base64img: photo.toString('base64'), size: 'full', scale: '5%' });
  assert.ok(!outcome.ok);
  assert.equal((outcome as { errors: Array<{ code: string }> }).errors.map((e) => e.code), ['invalid_scale']);
  assert.equal(front.exchanges[before]!.responseErrors, []);
  const wrong = await runClient(front, 'removeBackgroundFromImageFile', { apiKey: 'wrong', path: join(dir, 'photo.png') });
  assert.ok(!wrong.ok);
  assert.is((wrong as { errors: Array<{ title: string }> }).errors[0]!.title, 'Invalid API Key');
});

test.run();
