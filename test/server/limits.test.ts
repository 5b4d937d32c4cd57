// run-tests: alone (another request must be served within 900 ms while a client stalls)
// Upload limits, malformed multipart bodies and slow clients: each gets a clear JSON error and
// the server stays healthy.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import net from 'node:net';
import { gradient, solid } from '../helpers/images.js';
import { bodyOf, get, post, rawRequest, sleep, startTestServer, statusOf, TEST_KEY, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

let server: TestServer;
const LIMIT = 100_000;

test.before(async () => {
  server = await startTestServer({ MATTE_MAX_INPUT_BYTES: String(LIMIT), MATTE_REQUEST_TIMEOUT_SECONDS: '1' });
});
test.after(async () => {
  await server.close();
});

function head(path: string, extra: string): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${TEST_KEY}\r\n${extra}\r\n`;
}

function part(boundary: string, name: string, value: string | Buffer, filename?: string): Buffer {
  const disposition = `form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}`;
  return Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n\r\n`), Buffer.from(value), Buffer.from('\r\n')]);
}

async function healthy() {
  const r = await get(server.url, '/healthz');
  assert.is(r.status, 200);
}

test('an upload just over MATTE_MAX_INPUT_BYTES is 413 input_too_large', async () => {
  const big = Buffer.alloc(LIMIT + 1, 7);
  const r = await post(server.url, '/images/edit', { input: big, operations: '[{"flip":"h"}]' });
  assert.is(r.status, 413);
  assert.is(r.json().error.code, 'input_too_large');
  await healthy();
});

test('an upload at the limit is read (then judged by its content)', async () => {
  const exact = Buffer.alloc(LIMIT, 7);
  const r = await post(server.url, '/images/edit', { input: exact, operations: '[{"flip":"h"}]' });
  assert.is(r.status, 415);
  const ok = await post(server.url, '/images/edit', { input: gradient(20, 20), operations: '[{"flip":"h"}]', output: 'raw' });
  assert.is(ok.status, 200);
});

test('a declared Content-Length far over the limit is 413 before the body is read', async () => {
  const { text } = await rawRequest(server.port, [head('/images/edit', `Content-Type: multipart/form-data; boundary=x\r\nContent-Length: ${200 * 1024 * 1024}\r\n`), Buffer.alloc(1000)], { waitMs: 1500 });
  assert.is(statusOf(text), 413, text);
  assert.is(bodyOf(text).error.code, 'input_too_large');
  await healthy();
});

test('a chunked upload that never ends is cut at the limit with 413', async () => {
  const socket = net.connect(server.port, '127.0.0.1');
  let text = '';
  socket.on('data', (d) => (text += d.toString('latin1')));
  socket.on('error', () => {});
  await new Promise((r) => socket.on('connect', r));
  socket.write(head('/images/edit', 'Content-Type: multipart/form-data; boundary=zz\r\nTransfer-Encoding: chunked\r\n'));
  const partHead = Buffer.from('--zz\r\nContent-Disposition: form-data; name="input"; filename="a.png"\r\n\r\n');
  const chunk = (b: Buffer) => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]);
  socket.write(chunk(partHead));
  const block = Buffer.alloc(64 * 1024, 3);
  for (let i = 0; i < 40 && !text; i++) {
    socket.write(chunk(block)); // at most 2.5 MiB, far beyond the limit plus the form allowance
    await sleep(5);
  }
  await waitFor(() => `the 413 response, got ${JSON.stringify(text.slice(0, 300))}`, () => text.includes('}'));
  socket.destroy();
  assert.is(statusOf(text), 413, text.slice(0, 300));
  await healthy();
});

test('a refused client that keeps sending gets its 401, then the server drains a bounded amount and closes', async () => {
  const socket = net.connect(server.port, '127.0.0.1');
  let text = '';
  let closedByServer = false;
  socket.on('data', (d) => (text += d.toString('latin1')));
  socket.on('error', () => (closedByServer = true));
  socket.on('end', () => (closedByServer = true));
  socket.on('close', () => (closedByServer = true));
  await new Promise((r) => socket.on('connect', r));
  socket.write(`POST /images/edit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`);
  const block = Buffer.alloc(64 * 1024, 5);
  let sent = 0;
  // send up to 4 MiB: far more than the drain cap (limit + 1 MiB), the server must cut us off
  while (!closedByServer && sent < 4 * 1024 * 1024) {
    const ok = socket.write(block);
    sent += block.length;
    if (!ok) await Promise.race([new Promise((r) => socket.once('drain', r)), sleep(200)]);
    else await sleep(2);
  }
  await waitFor('the server to close the connection', () => closedByServer);
  socket.destroy();
  assert.is(statusOf(text), 401, text.slice(0, 200));
  assert.ok(closedByServer, 'the server closed the connection');
  assert.ok(sent < 4 * 1024 * 1024, `closed after ${sent} bytes`);
  await healthy();
});

test('a request that is not HTTP gets a JSON 400 with an X-Request-Id; oversized headers 431', async () => {
  const { text } = await rawRequest(server.port, ['THIS IS NOT HTTP\r\n\r\n'], { waitMs: 2000 });
  assert.is(statusOf(text), 400, text);
  assert.match(text, /X-Request-Id: [0-9a-f-]{36}/);
  assert.is(bodyOf(text).error.code, 'bad_request');
  const huge = await rawRequest(server.port, [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`], { waitMs: 2000 });
  assert.is(statusOf(huge.text), 431, huge.text);
  assert.is(bodyOf(huge.text).error.code, 'headers_too_large');
  await healthy();
});

test('malformed multipart bodies are 400 invalid_multipart', async () => {
  const bodies: Array<[string, Buffer]> = [
    ['no boundary', Buffer.from('whatever')],
    ['a truncated body', Buffer.concat([part('abc', 'operations', '[{"flip":"h"}]'), Buffer.from('--abc\r\nContent-Disposition: form-data; name="input"; filename="a.png"\r\n\r\nPNGDATA')])],
    ['a body without any boundary line', Buffer.from('this is not multipart at all\r\n')],
    ['a part without a name', Buffer.from('--abc\r\nContent-Disposition: form-data\r\n\r\nvalue\r\n--abc--\r\n')],
  ];
  for (const [what, body] of bodies) {
    const type = what === 'no boundary' ? 'multipart/form-data' : 'multipart/form-data; boundary=abc';
    const { text } = await rawRequest(server.port, [head('/images/edit', `Content-Type: ${type}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n`), body], { waitMs: 3000 });
    assert.is(statusOf(text), 400, `${what}: ${text}`);
    assert.ok(['invalid_multipart', 'input_missing'].includes(bodyOf(text).error.code), `${what}: ${text}`);
  }
  await healthy();
});

test('too many form fields is 400 invalid_field', async () => {
  const fields: Record<string, string> = {};
  for (let i = 0; i < 20; i++) fields[`f${i}`] = 'x';
  const data = new FormData();
  for (const [k, v] of Object.entries(fields)) data.append(k, v);
  const res = await fetch(`${server.url}/images/edit`, { method: 'POST', body: data, headers: { 'X-Api-Key': TEST_KEY } });
  assert.is(res.status, 400);
  assert.ok(['invalid_field', 'unknown_field'].includes(((await res.json()) as any).error.code));
});

test('a text field over 64 KiB is 400 invalid_field', async () => {
  const r = await post(server.url, '/images/edit', { input: solid(4, 4, [1, 2, 3]), operations: `[${' '.repeat(70_000)}]` });
  assert.is(r.status, 400);
  assert.is(r.json().error.code, 'invalid_field');
  assert.is(r.json().error.path, 'operations');
});

test('a slow client that stops sending gets 408 request_timeout; others are served meanwhile', async () => {
  const socket = net.connect(server.port, '127.0.0.1');
  let text = '';
  socket.on('data', (d) => (text += d.toString('latin1')));
  socket.on('error', () => {});
  await new Promise((r) => socket.on('connect', r));
  socket.write(head('/images/edit', 'Content-Type: multipart/form-data; boundary=s\r\nContent-Length: 5000\r\n'));
  socket.write(part('s', 'operations', '[{"flip":"h"}]'));
  // while it stalls, the server answers others at once
  const started = Date.now();
  await healthy();
  const ok = await post(server.url, '/images/edit', { input: gradient(10, 10), operations: '[{"flip":"h"}]', output: 'raw' });
  assert.is(ok.status, 200);
  assert.ok(Date.now() - started < 900, 'served while the slow client stalls');
  await waitFor(() => `the 408 response, got ${JSON.stringify(text.slice(0, 300))}`, () => text.includes('}'));
  socket.destroy();
  assert.is(statusOf(text), 408, text);
  assert.is(bodyOf(text).error.code, 'request_timeout');
  await healthy();
});

test('a slow client that trickles its body within the time limit is served', async () => {
  const boundary = 't';
  const body = Buffer.concat([part(boundary, 'operations', '[{"rotate":180}]'), part(boundary, 'output', 'raw'), part(boundary, 'input', gradient(8, 8), 'a.png'), Buffer.from(`--${boundary}--\r\n`)]);
  const socket = net.connect(server.port, '127.0.0.1');
  let text = '';
  socket.on('data', (d) => (text += d.toString('latin1')));
  const closed = new Promise((r) => socket.on('close', r));
  await new Promise((r) => socket.on('connect', r));
  socket.write(head('/images/edit', `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n`));
  const step = Math.ceil(body.length / 5);
  for (let at = 0; at < body.length; at += step) {
    socket.write(body.subarray(at, at + step));
    await sleep(100);
  }
  await closed;
  assert.is(statusOf(text), 200, text.slice(0, 300));
  assert.match(text, /Content-Type: image\/png/);
});

test.run();
