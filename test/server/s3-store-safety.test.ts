// run-tests: parallel
// The S3 store against what can go wrong around it: an endpoint that accepts connections and then
// never answers (every call ends at MATTE_S3_TIMEOUT_SECONDS: 503 store_unavailable, /readyz 503
// within one timeout, raw output unaffected), a foreign object under the prefix (never deleted by a sweep, however
// old), and the log (an SDK error is logged by name, code and status, never with the request
// smithy copies onto it).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PutObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { loadConfig } from '../../server/config.js';
import { S3ResultStore } from '../../server/store/index.js';
import { gradient } from '../helpers/images.js';
import { startStalledEndpoint, startTestS3, type TestS3 } from '../helpers/s3.js';
import { get, post, sleep, spawnServer, startTestServer, TEST_KEY } from '../helpers/server.js';

const png = gradient(40, 30);
const edit = { input: png, operations: '[{"flip":"h"}]' };
let s3: TestS3;

const stalled = await startStalledEndpoint();
const { endpoint: stalledEndpoint, accepted, requests } = stalled;

/** Settles to the promise's value, or to 'hung' if it has not settled after `ms` (a bound, not a timing). */
const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'hung'> => Promise.race([promise, sleep(ms).then(() => 'hung' as const)]);

test.before(async () => {
  s3 = await startTestS3();
});
test.after(async () => {
  await s3?.close();
  stalled.close();
});

test('an S3 endpoint that accepts and stalls: start, put, download and /readyz end at the deadline with 503', async () => {
  const env = { ...s3.env('stall/'), MATTE_S3_ENDPOINT: stalledEndpoint, MATTE_S3_TIMEOUT_SECONDS: '1' };
  const server = await within(startTestServer(env), 30_000);
  assert.ok(server !== 'hung', 'the start did not wait for the stalled endpoint');
  try {
    const stored = await within(post(server.url, '/images/edit', edit), 30_000);
    assert.ok(stored !== 'hung', 'put hung');
    assert.is(stored.status, 503, stored.body.toString());
    assert.is(stored.json().error.code, 'store_unavailable');
    const ready = await within(get(server.url, '/readyz'), 30_000);
    assert.ok(ready !== 'hung', '/readyz hung');
    assert.is(ready.status, 503);
    const download = await within(get(server.url, '/images/results/AAAAAAAAAAAAAAAAAAAAAAAA.png'), 30_000);
    assert.ok(download !== 'hung', 'download hung');
    assert.is(download.status, 503);
    assert.is((await post(server.url, '/images/edit', { ...edit, output: 'raw' })).status, 200);
    assert.ok(accepted.length > 0, 'the endpoint was connected to');
  } finally {
    await server.close();
  }
});

test('/readyz on a stalled S3 store answers 503 within one MATTE_S3_TIMEOUT_SECONDS; other calls keep two attempts', async () => {
  const seconds = 2;
  const prefix = 'stall-ready/';
  const env = { ...s3.env(prefix), MATTE_S3_ENDPOINT: stalledEndpoint, MATTE_S3_TIMEOUT_SECONDS: String(seconds) };
  const server = await within(startTestServer(env), 30_000);
  assert.ok(server !== 'hung', 'the start did not wait for the stalled endpoint');
  const sent = (what: RegExp) => requests.filter((line) => what.test(line)).length;
  try {
    // A bound of 1.5 x the timeout: the SDK's two attempts would take twice it.
    const ready = await within(get(server.url, '/readyz'), 1.5 * seconds * 1000);
    assert.ok(ready !== 'hung', '/readyz did not answer within 1.5 x MATTE_S3_TIMEOUT_SECONDS');
    assert.is(ready.status, 503);
    assert.is(sent(/^PUT \S*stall-ready\/\.matte-probe-/), 1, 'the probe made one attempt');
    const download = await within(get(server.url, '/images/results/CCCCCCCCCCCCCCCCCCCCCCCC.png'), 30_000);
    assert.ok(download !== 'hung', 'download hung');
    assert.is(download.status, 503);
    assert.is(sent(/^HEAD \S*stall-ready\/CCCCCCCCCCCCCCCCCCCCCCCC\.png/), 2, 'the download\'s HeadObject kept its two attempts');
  } finally {
    await server.close();
  }
});

test('a foreign object under the prefix, named like a result and older than any result: survives sweeps', async () => {
  const prefix = 'shared-with-others/';
  const foreignKey = `${prefix}BBBBBBBBBBBBBBBBBBBBBBBB.png`;
  await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: foreignKey, Body: 'not matte', Metadata: { 'expires-at': '1' } }));
  let now = Date.now();
  const store = new S3ResultStore({ bucket: s3.bucket, prefix, endpoint: s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, presign: false, ttlSeconds: 10, sweepIntervalMs: 0, now: () => now });
  await store.open();
  try {
    const ours = await store.put(png, { ext: 'png', mediaType: 'image/png' });
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `${prefix}${ours.id}.png` }));
    assert.is(head.Metadata?.['matte-store'], '1', 'matte marks what it writes');
    now += 3 * 86_400_000; // beyond the longest lifetime of any result
    assert.is(await store.sweep(), 1, 'only its own result is swept');
    await store.sweep();
    const foreign = await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: foreignKey }));
    assert.is(foreign.ContentLength, 9, 'the foreign object is still there');
    assert.is(await store.get(ours.id, 'png'), undefined);
  } finally {
    await store.close();
  }
});

test('the default prefix is matte-results/; MATTE_S3_PREFIX=/ is the bucket root', () => {
  const base = { MATTE_RESULTS_STORE: 's3', MATTE_S3_BUCKET: 'b-1' };
  assert.is(loadConfig(base).s3?.prefix, 'matte-results/');
  assert.is(loadConfig({ ...base, MATTE_S3_PREFIX: '/' }).s3?.prefix, '');
  assert.is(loadConfig(base).s3?.timeoutMs, 30_000);
});

test('S3 errors in the log: name, code and status only (no StringToSign, CanonicalRequest or signature)', async () => {
  const refused = { ...s3.env('refused/'), AWS_ACCESS_KEY_ID: 'SOMEONE-ELSE', AWS_SECRET_ACCESS_KEY: 'not-the-secret', MATTE_LOG_LEVEL: 'info', MATTE_S3_TIMEOUT_SECONDS: '1' };
  for (const env of [refused, { ...refused, MATTE_S3_ENDPOINT: stalledEndpoint }]) {
    const server = await spawnServer({ MATTE_API_KEYS: TEST_KEY, MATTE_CONCURRENCY: '1', ...env });
    try {
      assert.is((await post(server.url, '/images/edit', edit)).status, 503);
      assert.is((await get(server.url, '/readyz')).status, 503);
    } finally {
      await server.stop();
    }
    const log = server.output();
    assert.match(log, /store_unavailable/);
    for (const secret of ['StringToSign', 'CanonicalRequest', 'X-Amz-Signature', 'Signature=', 'SOMEONE-ELSE', '$response']) {
      assert.not.ok(log.includes(secret), `the log holds ${secret}`);
    }
  }
});

test.run();
