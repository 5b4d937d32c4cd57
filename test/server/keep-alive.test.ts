// run-tests: parallel
// A successful image response keeps its connection: `Connection: close` is for refusals that may
// leave a body unread and for the shutdown (connection-close.test.ts), never for a 200, so a
// client (a proxy, autocannon, a browser) sends its next request on the same socket. A raw result
// is the encoded bytes with their exact Content-Length (no chunked stream around them).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import net from 'node:net';
import { decode, gradient } from '../helpers/images.js';
import { startTestServer, statusOf, TEST_KEY } from '../helpers/server.js';

const server = await startTestServer();

function request(): Buffer {
  const boundary = 'keepalive-boundary';
  const image = gradient(40, 30);
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="operations"\r\n\r\n[{"resize":{"width":20}}]\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="output"\r\n\r\nraw\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="input"; filename="g.png"\r\nContent-Type: image/png\r\n\r\n`),
    image,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const head = `POST /images/edit HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${TEST_KEY}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head), body]);
}

/** Reads one HTTP/1.1 response with a Content-Length from the socket's data. */
function readResponse(socket: net.Socket): Promise<{ head: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = data.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
      if (!Number.isFinite(length)) return reject(new Error(`no Content-Length in ${head}`));
      if (data.length < end + 4 + length) return;
      socket.off('data', onData);
      resolve({ head, body: data.subarray(end + 4, end + 4 + length) });
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

test('two raw edits on one connection: 200 both, exact Content-Length, no Connection: close', async () => {
  const socket = net.connect(server.port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let closed = false;
  socket.on('close', () => (closed = true));
  try {
    for (let i = 0; i < 2; i++) {
      const answer = readResponse(socket);
      socket.write(request());
      const { head, body } = await answer;
      assert.is(statusOf(head), 200, head);
      assert.not.match(head, /\r\nconnection: close/i);
      assert.not.match(head, /\r\ntransfer-encoding:/i);
      assert.match(head, /\r\ncontent-type: image\/png/i);
      assert.match(head, /\r\nx-image-width: 20\r\n/i);
      assert.match(head, /\r\nx-image-height: 15\r\n/i);
      assert.match(head, /\r\nx-request-id: \S+/i);
      const image = await decode(body);
      assert.is(image.width, 20);
      assert.is(image.height, 15);
      assert.not.ok(closed, 'the server closed the connection after a 200');
    }
  } finally {
    socket.destroy();
  }
});

test.after(() => server.close());
test.run();
