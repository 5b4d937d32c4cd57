// run-tests: parallel
// Refusals that may leave a request body unread (401, 413, 503) close the connection: the response
// says `Connection: close` and the server closes the socket after it, instead of keeping it alive
// for a client that may still be half-way through an upload.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import net from 'node:net';
import { rawRequest, startTestServer, statusOf } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const server = await startTestServer({ MATTE_CONCURRENCY: '1', MATTE_QUEUE_LIMIT: '0', MATTE_MAX_INPUT_BYTES: '1000' });

const head = (extra: string) => `POST /images/edit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=xyz\r\n${extra}\r\n`;
const body = '--xyz\r\nContent-Disposition: form-data; name="operations"\r\n\r\n[{"flip":"h"}]\r\n--xyz--\r\n';

function assertClosed(result: { text: string; closed: boolean }, status: number) {
  assert.is(statusOf(result.text), status, result.text.slice(0, 300));
  assert.match(result.text, /\r\nConnection: close\r\n/i);
  assert.ok(result.closed, 'the server kept the connection open');
}

test('401 with the whole (small) body sent: Connection: close, and the socket is closed', async () => {
  const r = await rawRequest(server.port, [head(`Content-Length: ${body.length}\r\n`), body], { waitMs: 4000 });
  assertClosed(r, 401);
});

test('401 with the body still to come: the response, then the rest drained and the socket closed', async () => {
  const socket = net.connect(server.port, '127.0.0.1');
  let text = '';
  socket.on('data', (d) => (text += d.toString('latin1')));
  const closed = new Promise<boolean>((resolve) => {
    socket.on('close', () => resolve(true));
    setTimeout(() => resolve(false), 4000);
  });
  socket.write(head(`Content-Length: ${body.length + 100}\r\n`));
  await waitFor(() => `the 401 response before the body, got ${JSON.stringify(text.slice(0, 300))}`, () => text.includes('}'));
  assert.is(statusOf(text), 401, text);
  socket.write(body + 'x'.repeat(100)); // the rest of the body: the client sees the answer first
  assert.ok(await closed, 'the server kept the connection open');
  assert.match(text, /\r\nConnection: close\r\n/i);
});

test('413 on a declared Content-Length over the limit: Connection: close, and the socket is closed', async () => {
  const r = await rawRequest(server.port, [head(`X-Api-Key: test-key-0123456789abcdef\r\nContent-Length: 5000000\r\n`), body], { waitMs: 8000 });
  assertClosed(r, 413);
});

test('503 overloaded: Connection: close, and the socket is closed', async () => {
  // One admitted request holds the only place: its body never finishes.
  const holder = net.connect(server.port, '127.0.0.1');
  holder.on('error', () => {});
  holder.write(head(`X-Api-Key: test-key-0123456789abcdef\r\nContent-Length: ${body.length + 10}\r\n`));
  const limiter = server.running.services.limiter;
  await waitFor('the holder to take the only place', () => limiter.full());
  const r = await rawRequest(server.port, [head(`X-Api-Key: test-key-0123456789abcdef\r\nContent-Length: ${body.length}\r\n`), body], { waitMs: 4000 });
  holder.destroy();
  assertClosed(r, 503);
});

test.after(() => server.close());
test.run();
