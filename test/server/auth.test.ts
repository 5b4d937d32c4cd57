// run-tests: parallel
// X-Api-Key on both image endpoints: checked before the body is read, in constant time, keys from
// MATTE_API_KEYS / MATTE_API_KEYS_FILE or generated.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfig, ConfigError } from '../../server/config.js';
import { gradient } from '../helpers/images.js';
import { bodyOf, get, post, type Fields, rawRequest, startTestServer, statusOf, tempDir, TEST_KEY, type TestServer } from '../helpers/server.js';

let server: TestServer;
let keysDir: string;
const png = gradient(16, 16);

test.before(async () => {
  keysDir = await tempDir('matte-keys-');
  const file = join(keysDir, 'keys');
  await writeFile(file, '# comment\nfile-key-one\n\nfile-key-two\n');
  // Every wrong key of these tests comes from one address: the slow-down (safe-defaults.test.ts) is off.
  server = await startTestServer({ MATTE_API_KEYS: `${TEST_KEY}, second-key`, MATTE_API_KEYS_FILE: file, MATTE_AUTH_FAILURES_PER_MINUTE: '0' });
});
test.after(async () => {
  await server.close();
  await rm(keysDir, { recursive: true, force: true });
});

for (const path of ['/images/edit', '/images/remove-background']) {
  const fields: Fields = path === '/images/edit' ? { input: png, operations: '[{"flip":"h"}]', output: 'raw' } : { input: png, output: 'raw', format: 'webp' };

  test(`${path}: no key is 401 unauthorized`, async () => {
    const r = await post(server.url, path, fields, { key: null });
    assert.is(r.status, 401);
    assert.is(r.json().error.code, 'unauthorized');
    assert.ok(r.headers.get('x-request-id'));
  });

  test(`${path}: a wrong key, a prefix of a key, an empty key are 401`, async () => {
    for (const key of ['wrong', TEST_KEY.slice(0, -1), `${TEST_KEY}x`, ' ']) {
      const r = await post(server.url, path, fields, { key });
      assert.is(r.status, 401, key);
      assert.is(r.json().error.code, 'unauthorized');
    }
  });

  test(`${path}: keys of other lengths are 401: longer than the longest key, a prefix of a shorter one, one byte off, non-ASCII`, async () => {
    // The keys are compared zero-padded to the longest one, then by length (server/middleware.ts).
    for (const key of [`${TEST_KEY}${'x'.repeat(200)}`, 'second-ke', 'second-keyy', 'file-key-onf', 'file-key-on', 'sécond-key', '\u00e9'.repeat(40)]) {
      const r = await post(server.url, path, fields, { key });
      assert.is(r.status, 401, key);
      assert.is(r.json().error.code, 'unauthorized');
    }
  });

  test(`${path}: every configured key works (env list and keys file)`, async () => {
    for (const key of [TEST_KEY, 'second-key', 'file-key-one', 'file-key-two']) {
      const r = await post(server.url, path, fields, { key });
      assert.is(r.status, 200, `${key}: ${r.body.toString().slice(0, 200)}`);
    }
  });
}

test('the result download, health and OpenAPI routes need no key', async () => {
  assert.is((await get(server.url, '/healthz')).status, 200);
  assert.is((await get(server.url, '/openapi.json')).status, 200);
  assert.is((await get(server.url, '/images/results/AAAAAAAAAAAAAAAAAAAAAAAA.png')).status, 404);
});

test('the key is checked before the body: an unauthenticated 50 MB upload gets 401 after 64 KiB', async () => {
  const head =
    'POST /images/edit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=xyz\r\n' +
    `Content-Length: ${50 * 1024 * 1024}\r\n\r\n`;
  const started = Date.now();
  const { text } = await rawRequest(server.port, [head, Buffer.alloc(64 * 1024, 1)], { waitMs: 1500 });
  assert.is(statusOf(text), 401, text);
  assert.is(bodyOf(text).error.code, 'unauthorized');
  assert.ok(Date.now() - started < 3000);
  // still healthy
  assert.is((await get(server.url, '/healthz')).status, 200);
});

test('Expect: 100-continue without a key: 401 at once, no 100 Continue, so no body is ever sent', async () => {
  const head =
    'POST /images/remove-background HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=xyz\r\n' +
    'Content-Length: 10000000\r\nExpect: 100-continue\r\n\r\n';
  const { text } = await rawRequest(server.port, [head], { waitMs: 1000 });
  assert.not.match(text, /100 Continue/);
  assert.is(statusOf(text), 401, text);
});

test('Expect: 100-continue with the key: 100 Continue, then the answer', async () => {
  const boundary = 'b0undary';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="operations"\r\n\r\n[{"flip":"h"}]\r\n--${boundary}\r\nContent-Disposition: form-data; name="output"\r\n\r\nraw\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="input"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
    png,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const head =
    `POST /images/edit HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${TEST_KEY}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
    `Content-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`;
  const net = await import('node:net');
  const text = await new Promise<string>((resolve) => {
    const socket = net.connect(server.port, '127.0.0.1');
    let out = '';
    let sent = false;
    socket.on('data', (d) => {
      out += d.toString('latin1');
      if (out.startsWith('HTTP/1.1 100') && !sent && out.includes('\r\n\r\n')) { sent = true; socket.write(body); }
    });
    socket.on('close', () => resolve(out));
    socket.write(head);
  });
  assert.match(text, /^HTTP\/1\.1 100 Continue/, text);
  assert.match(text, /HTTP\/1\.1 200 OK/, text);
  assert.match(text, /Content-Type: image\/png/);
});

test('config: keys from the list and the file; none configured gives a generated key of >= 128 bits', async () => {
  const generated = loadConfig({});
  assert.is(generated.apiKeys.length, 1);
  assert.is(generated.generatedKey, generated.apiKeys[0]);
  assert.ok(Buffer.from(generated.generatedKey!, 'base64url').length >= 16);
  assert.is.not(loadConfig({}).generatedKey, generated.generatedKey);
  const listed = loadConfig({ MATTE_API_KEYS: 'a1, b2 ,,c3' });
  assert.equal(listed.apiKeys, ['a1', 'b2', 'c3']);
  assert.is(listed.generatedKey, undefined);
  assert.throws(() => loadConfig({ MATTE_API_KEYS_FILE: join(keysDir, 'missing') }), (e: Error) => e instanceof ConfigError && /MATTE_API_KEYS_FILE/.test(e.message));
});

test.run();
