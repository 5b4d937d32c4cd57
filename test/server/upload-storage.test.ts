// run-tests: parallel
// The upload's storage (server/input/upload-storage.ts): a file that arrived in one chunk is kept as that
// chunk, one in several chunks is joined; either way the job gets exactly the uploaded bytes. The
// HTTP tests send the same upload in one write and in many small writes, over real sockets.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { UploadStorage, joinChunks } from '../../server/input/upload-storage.js';
import { decode, gradient } from '../helpers/images.js';
import { rawRequest, sleep, startTestServer, TEST_KEY, type TestServer } from '../helpers/server.js';

function stored(chunks: Buffer[]): Promise<{ buffer: Buffer; size: number }> {
  return new Promise((resolve, reject) => {
    new UploadStorage()._handleFile({} as IncomingMessage, { stream: Readable.from(chunks, { objectMode: false }) }, (err, info) => (err ? reject(err) : resolve(info!)));
  });
}

test('one chunk is kept as it is, not copied', async () => {
  const chunk = Buffer.from('0123456789');
  const { buffer, size } = await stored([chunk]);
  assert.is(size, 10);
  assert.is(buffer.buffer, chunk.buffer, 'same memory');
  assert.is(buffer.byteOffset, chunk.byteOffset);
  assert.is(buffer.toString(), '0123456789');
});

test('several chunks are joined in order; no chunk at all is an empty file', async () => {
  const { buffer, size } = await stored([Buffer.from('abc'), Buffer.from('de'), Buffer.from('fghij')]);
  assert.is(size, 10);
  assert.is(buffer.toString(), 'abcdefghij');
  assert.is(joinChunks([], 0).length, 0);
  assert.is((await stored([])).size, 0);
});

test('_removeFile drops the buffer', () => {
  const file: { buffer?: Buffer } = { buffer: Buffer.from('x') };
  let called = false;
  new UploadStorage()._removeFile({} as IncomingMessage, file, (err) => {
    assert.is(err, null);
    called = true;
  });
  assert.ok(called);
  assert.is(file.buffer, undefined);
});

// ---- over HTTP ------------------------------------------------------------------------------------

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  await server.close();
});

const png = gradient(200, 150);

function request(): Buffer {
  const boundary = '----upload-storage-test';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="operations"\r\n\r\n[{"flip":"h"}]\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="output"\r\n\r\nraw\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="input"; filename="g.png"\r\nContent-Type: image/png\r\n\r\n`),
    png,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const head = `POST /images/edit HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${TEST_KEY}\r\nConnection: close\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head), body]);
}

/** The body of a raw response (Content-Length, not chunked), as bytes. */
function imageOf(text: string): Buffer {
  assert.match(text, /^HTTP\/1\.1 200 /);
  assert.match(text, /\r\nx-image-width: 200\r\n/i);
  assert.match(text, /\r\nx-image-height: 150\r\n/i);
  return Buffer.from(text.slice(text.indexOf('\r\n\r\n') + 4), 'latin1');
}

test('an upload sent in one write and the same sent in 300-byte writes give the same pixels, flipped', async () => {
  const whole = request();
  const one = imageOf((await rawRequest(server.port, [whole], { waitMs: 10_000 })).text);
  // Many small writes with pauses: the file reaches busboy in many chunks.
  const pieces: Buffer[] = [];
  for (let at = 0; at < whole.length; at += 300) pieces.push(whole.subarray(at, at + 300));
  const net = await import('node:net');
  const text = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(server.port, '127.0.0.1');
    let received = '';
    socket.on('data', (d) => (received += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    socket.on('connect', async () => {
      for (const piece of pieces) {
        socket.write(piece);
        await sleep(1);
      }
    });
  });
  const many = imageOf(text);
  const a = await decode(one);
  const b = await decode(many);
  assert.equal([a.width, a.height], [200, 150]);
  assert.ok(a.data.equals(b.data), 'same pixels whichever way the upload arrived');
  const source = await decode(png);
  // flip h: the left column of the result is the right column of the input.
  for (const y of [0, 75, 149]) {
    const i = (y * 200) * 4;
    const j = (y * 200 + 199) * 4;
    assert.equal([...a.data.subarray(i, i + 3)], [...source.data.subarray(j, j + 3)]);
  }
});

test.run();
