// run-tests: parallel
// MATTE_RESULTS_STORE=s3 against a real S3-protocol server (s3rver on loopback): two matte
// processes sharing one bucket and prefix, the download headers of section 8 through matte,
// expiry (404 before deletion, then swept), presigned URLs, a store that refuses the credentials
// or does not answer (503 store_unavailable, /readyz 503, never 500), a missing SDK and bad
// settings stopping the start with the variable's name.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { S3ResultStore } from '../../server/store/index.js';
import { OBJECT_FLOOR_BYTES } from '../../server/store/common.js';
import { gradient } from '../helpers/images.js';
import { startTestS3, type TestS3 } from '../helpers/s3.js';
import { get, post, spawnServer, tempDir, TEST_KEY, type ChildServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const TTL_SECONDS = 3;
const png = gradient(40, 30);
const edit = { input: png, operations: '[{"flip":"h"}]' };
let s3: TestS3;
let a: ChildServer;
let b: ChildServer;

const pathOf = (url: string) => new URL(url).pathname;

async function keysUnder(prefix: string): Promise<string[]> {
  const out = await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!).filter((k) => !k.includes('.matte-probe-'));
}

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test.before(async () => {
  s3 = await startTestS3();
  const env = { MATTE_API_KEYS: TEST_KEY, MATTE_RESULT_TTL_SECONDS: String(TTL_SECONDS), MATTE_CONCURRENCY: '1', ...s3.env('shared/') };
  [a, b] = await Promise.all([spawnServer(env), spawnServer(env)]);
});
test.after(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await s3?.close();
});

test('two processes on one bucket: put on either, download from the other with ETag, Range, HEAD and 304', async () => {
  assert.is((await get(a.url, '/readyz')).status, 200);
  const raw = (await post(a.url, '/images/edit', { ...edit, output: 'raw' })).body;
  for (const [putter, reader] of [[a, b], [b, a]] as const) {
    const r = await post(putter.url, '/images/edit', edit);
    assert.is(r.status, 200, r.body.toString());
    const { id, url } = r.json() as { id: string; url: string };
    assert.ok(url.startsWith(putter.url), 'served through matte by default');
    assert.equal(await keysUnder(`shared/${id}`), [`shared/${id}.png`]);
    const d = await get(reader.url, pathOf(url));
    assert.is(d.status, 200);
    assert.ok(d.body.equals(raw));
    assert.is(d.headers.get('content-type'), 'image/png');
    assert.is(d.headers.get('content-length'), String(raw.length));
    assert.is(d.headers.get('etag'), `"${id}"`);
    assert.match(d.headers.get('cache-control') ?? '', /^private, max-age=[0-3]$/);
    const h = await get(reader.url, pathOf(url), { method: 'HEAD' });
    assert.is(h.status, 200);
    assert.is(h.headers.get('content-length'), String(raw.length));
    assert.is(h.body.length, 0);
    const part = await get(reader.url, pathOf(url), { headers: { Range: 'bytes=4-11' } });
    assert.is(part.status, 206);
    assert.is(part.headers.get('content-range'), `bytes 4-11/${raw.length}`);
    assert.ok(part.body.equals(raw.subarray(4, 12)));
    assert.is((await get(reader.url, pathOf(url), { headers: { 'If-None-Match': `"${id}"` } })).status, 304);
    assert.is((await get(reader.url, pathOf(url).replace('.png', '.webp'))).status, 404);
  }
  assert.is((await get(b.url, '/images/results/AAAAAAAAAAAAAAAAAAAAAAAA.png')).status, 404);
});

test('expiry: 404 after the TTL even while the object is still in the bucket; then the sweeper deletes it', async () => {
  let now = Date.now();
  const store = new S3ResultStore({ ...storeSettings('expiry/'), ttlSeconds: 10, sweepIntervalMs: 0, now: () => now });
  await store.open();
  const r = await store.put(Buffer.from('bytes'), { ext: 'png', mediaType: 'image/png' });
  assert.is((await store.get(r.id, 'png'))?.size, 5);
  now += 10_001;
  assert.is(await store.get(r.id, 'png'), undefined, 'expired');
  await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `expiry/${r.id}.png` })); // still there
  assert.is(await store.sweep(), 1);
  assert.equal(await keysUnder('expiry/'), []);
  await store.close();

  // Through the processes: their own sweepers delete what expired.
  const put = await post(a.url, '/images/edit', edit);
  const { id, url } = put.json();
  await waitFor('the result to expire', async () => (await get(b.url, pathOf(url))).status === 404);
  assert.is((await get(b.url, pathOf(url))).status, 404);
  await waitFor('the expired objects to be swept', async () => (await keysUnder(`shared/${id}`)).length === 0, { intervalMs: 250 });
  assert.equal(await keysUnder(`shared/${id}`), [], 'swept');
});

test('MATTE_RESULTS_MAX_BYTES on a bucket: 507 beyond it, counting the objects already there, each at least one object floor', async () => {
  const first = new S3ResultStore({ ...storeSettings('quota/'), sweepIntervalMs: 0 });
  await first.open();
  await first.put(Buffer.alloc(600), { ext: 'png', mediaType: 'image/png' }); // another process's result
  // 2.5 floors: the 600 bytes there and 300 more are two floors; 300 more again would be three.
  const store = new S3ResultStore({ ...storeSettings('quota/'), maxBytes: 2.5 * OBJECT_FLOOR_BYTES, sweepIntervalMs: 0 });
  await store.open();
  await store.put(Buffer.alloc(300), { ext: 'png', mediaType: 'image/png' });
  let error: { status?: number; code?: string } = {};
  await store.put(Buffer.alloc(300), { ext: 'png', mediaType: 'image/png' }).catch((err) => (error = err));
  assert.equal([error.status, error.code], [507, 'insufficient_storage']);
  assert.equal(store.usage(), { results: 1, bytes: OBJECT_FLOOR_BYTES }, 'the scan before the first put: 600 bytes cost one floor');
  await store.close();
  // MATTE_RESULTS_MAX_ENTRIES: the number of objects, whatever their size.
  const counted = new S3ResultStore({ ...storeSettings('quota/'), maxEntries: 3, sweepIntervalMs: 0 });
  await counted.open();
  await counted.put(Buffer.alloc(1), { ext: 'png', mediaType: 'image/png' });
  error = {};
  await counted.put(Buffer.alloc(1), { ext: 'png', mediaType: 'image/png' }).catch((err) => (error = err));
  assert.equal([error.status, error.code], [507, 'insufficient_storage'], 'the fourth object');
  assert.match((error as Error).message, /MATTE_RESULTS_MAX_ENTRIES/);
  await counted.close();
  await first.close();
});

function storeSettings(prefix: string) {
  return { bucket: s3.bucket, prefix, endpoint: s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, presign: false, ttlSeconds: TTL_SECONDS };
}

test('MATTE_RESULTS_PRESIGN=1: url is the bucket\'s presigned URL, valid until the result expires', async () => {
  const server = await spawnServer({ MATTE_API_KEYS: TEST_KEY, MATTE_RESULT_TTL_SECONDS: '600', MATTE_CONCURRENCY: '1', MATTE_RESULTS_PRESIGN: '1', ...s3.env('presigned/') });
  try {
    const raw = (await post(server.url, '/images/edit', { ...edit, output: 'raw' })).body;
    const r = await post(server.url, '/images/edit', edit);
    assert.is(r.status, 200);
    const { id, url } = r.json() as { id: string; url: string };
    const parsed = new URL(url);
    assert.is(parsed.origin, s3.endpoint);
    assert.ok(parsed.pathname.endsWith(`/presigned/${id}.png`), url);
    const expires = Number(parsed.searchParams.get('X-Amz-Expires'));
    assert.ok(expires > 590 && expires <= 600, `X-Amz-Expires=${expires}`);
    const d = await get(url, '');
    assert.is(d.status, 200);
    assert.ok(d.body.equals(raw));
    assert.not.match(server.output(), /X-Amz-Signature/, 'a presigned URL is never logged');
  } finally {
    await server.stop();
  }
});

test('refused credentials or an unreachable store: /readyz 503, output=url 503 store_unavailable, output=raw still 200', async () => {
  // s3rver checks the access key id (not the signature): an unknown key is refused with 403.
  const refused = { ...s3.env('refused/'), AWS_ACCESS_KEY_ID: 'SOMEONE-ELSE', AWS_SECRET_ACCESS_KEY: 'not-the-secret' };
  const unreachable = { ...s3.env('gone/'), MATTE_S3_ENDPOINT: `http://127.0.0.1:${await closedPort()}` };
  for (const env of [refused, unreachable]) {
    const server = await spawnServer({ MATTE_API_KEYS: TEST_KEY, MATTE_CONCURRENCY: '1', ...env });
    try {
      const ready = await get(server.url, '/readyz');
      assert.is(ready.status, 503);
      assert.match(ready.json().error.message, /result store/);
      const r = await post(server.url, '/images/edit', edit);
      assert.is(r.status, 503, r.body.toString());
      assert.is(r.json().error.code, 'store_unavailable');
      assert.ok(r.headers.get('retry-after'));
      assert.is((await post(server.url, '/images/edit', { ...edit, output: 'raw' })).status, 200);
      assert.is((await get(server.url, '/images/results/AAAAAAAAAAAAAAAAAAAAAAAA.png')).status, 503);
    } finally {
      await server.stop();
    }
  }
  assert.equal(await keysUnder('refused/'), [], 'nothing stored under refused credentials');
});

test('start-up errors name the variable: missing SDK, no such bucket, unknown store, missing bucket, malformed endpoint', async () => {
  // The SDK made unresolvable with a module hook, as on an install without the optional peer.
  const dir = await tempDir('matte-nosdk-');
  const hooks = join(dir, 'hooks.mjs');
  await writeFile(hooks, "export async function resolve(specifier, context, next) {\n  if (specifier.startsWith('@aws-sdk/')) { const e = new Error(`Cannot find package '${specifier}'`); e.code = 'ERR_MODULE_NOT_FOUND'; throw e; }\n  return next(specifier, context);\n}\n");
  const register = join(dir, 'register.mjs');
  await writeFile(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ ...s3.env('x/'), NODE_OPTIONS: `--import=${pathToFileURL(register).href}` }, /MATTE_RESULTS_STORE=s3 needs the AWS SDK.*npm install @aws-sdk\/client-s3 @aws-sdk\/s3-request-presigner/],
    [{ ...s3.env('x/'), MATTE_S3_BUCKET: 'no-such-bucket' }, /MATTE_S3_BUCKET=no-such-bucket: no such bucket/],
    [{ MATTE_RESULTS_STORE: 'ftp' }, /configuration error: MATTE_RESULTS_STORE/],
    [{ MATTE_RESULTS_STORE: 's3' }, /configuration error: MATTE_S3_BUCKET is required/],
    [{ ...s3.env('x/'), MATTE_S3_ENDPOINT: 'localhost:9000' }, /configuration error: MATTE_S3_ENDPOINT/],
  ];
  for (const [env, expected] of cases) {
    let message = '';
    await spawnServer({ MATTE_API_KEYS: TEST_KEY, MATTE_CONCURRENCY: '1', ...env }).then(
      (s) => s.stop('SIGKILL'),
      (err: Error) => (message = err.message),
    );
    assert.match(message, expected, message);
  }
});

test.run();
