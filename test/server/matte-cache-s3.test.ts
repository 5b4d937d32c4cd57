// run-tests: parallel
// The matte cache on the S3 store (server/store/s3-entries.ts) against a real S3-protocol server
// (s3rver on loopback), through the real server and a small model (test/helpers/onnx.ts: the matte
// is the pixel's brightness; what the cache holds does not depend on which model made it): the
// entry is a marked object under <prefix>matte-cache/, shared by every process on the bucket; a
// second request for the same image with another output is a hit (counted in /metrics) with the
// bytes of a computed matte; a corrupt entry is recomputed and replaced; another application's
// object under an entry's name is never served, replaced or deleted; an entry past
// MATTE_MATTE_CACHE_TTL_SECONDS is a miss and is swept; the size bound evicts the least recently
// written; a store that stalls costs a miss, never the request.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { edit } from '../../lib/index.js';
import { S3ResultStore } from '../../server/store/index.js';
import type { S3Entries } from '../../server/store/s3-entries.js';
import { OBJECT_FLOOR_BYTES } from '../../server/store/common.js';
import { fixture } from '../helpers/fixtures.js';
import { brightnessModelEnv } from '../helpers/onnx.js';
import { startStalledEndpoint, startTestS3, type TestS3 } from '../helpers/s3.js';
import { scratchDir } from '../helpers/scratch.js';
import { post, scrapeMetrics, startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const AREA = 'matte-cache/';
let s3: TestS3;
let photo: Buffer;
let scratch = '';
scratchDir(test, 'matte-cache-s3-model-', (path) => (scratch = path));
/** The servers' one model: the brightness graph. */
let modelEnv: Record<string, string> = {};

test.before(async () => {
  s3 = await startTestS3();
  photo = (await edit(await fixture('lenna.png'), [{ resize: { width: 300 } }], { format: 'jpeg' })).data;
  ({ env: modelEnv } = await brightnessModelEnv(scratch));
});
test.after(async () => {
  await s3?.close();
});

function count(metrics: string, outcome: string): number {
  return Number(new RegExp(`matte_matte_cache_total\\{outcome="${outcome}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
}

async function counts(server: TestServer): Promise<Record<string, number>> {
  const text = await scrapeMetrics(server);
  return Object.fromEntries(['hit', 'miss', 'bad', 'stored', 'dropped'].map((o) => [o, count(text, o)]));
}

/** Waits until the cache has stored or dropped `n` entries (its writes are after the answer). */
async function settled(server: TestServer, n: number): Promise<Record<string, number>> {
  return waitFor(`${n} matte cache writes`, async () => {
    const c = await counts(server);
    return c.stored! + c.dropped! >= n && c;
  });
}

async function entryKeys(prefix: string): Promise<string[]> {
  const out = await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix + AREA }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

async function object(key: string): Promise<{ data: Buffer; marker: string | undefined }> {
  const out = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
  return { data: Buffer.from(await out.Body!.transformToByteArray()), marker: out.Metadata?.['matte-store'] };
}

const server = (prefix: string, env: Record<string, string> = {}) => startTestServer({ ...modelEnv, ...s3.env(prefix), MATTE_METRICS_ADDRESS: '127.0.0.1:0', ...env });
const cutOut = (s: TestServer) => post(s.url, '/images/remove-background', { input: photo, output: 'raw', format: 'png' });
const onWhite = (s: TestServer) =>
  post(s.url, '/images/edit', { input: photo, output: 'raw', format: 'png', operations: JSON.stringify([{ removeBackground: true }, { background: '#fff' }]) });

test('on by default: a marked entry under <prefix>matte-cache/, shared by every process on the bucket; a hit gives the bytes of a computed matte', async () => {
  const prefix = 'shared/';
  const a = await server(prefix);
  const b = await server(prefix);
  const plain = await startTestServer({ ...modelEnv, ...s3.env('plain/'), MATTE_MATTE_CACHE_MAX_BYTES: '0', MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
  try {
    const first = await cutOut(a);
    assert.is(first.status, 200, first.body.toString());
    await settled(a, 1);
    const keys = await entryKeys(prefix);
    assert.is(keys.length, 1);
    assert.match(keys[0]!, /^shared\/matte-cache\/[0-9a-f]{64}$/);
    assert.is((await object(keys[0]!)).marker, '1', 'matte marks what it writes');
    // Another process on the same bucket, another output of the same image: no model run.
    const second = await onWhite(b);
    assert.is(second.status, 200);
    assert.equal(await counts(b), { hit: 1, miss: 0, bad: 0, stored: 0, dropped: 0 });
    assert.ok(second.body.equals((await onWhite(plain)).body), 'the bytes of a computed matte');
    assert.ok((await cutOut(a)).body.equals(first.body));
    assert.equal(await counts(a), { hit: 1, miss: 1, bad: 0, stored: 1, dropped: 0 });
    // Off: nothing written under the area, nothing counted.
    await cutOut(plain);
    assert.equal(await entryKeys('plain/'), []);
    assert.equal(await counts(plain), { hit: 0, miss: 0, bad: 0, stored: 0, dropped: 0 });
  } finally {
    await a.close();
    await b.close();
    await plain.close();
  }
});

test('a corrupt entry in the bucket is recomputed and replaced, never served', async () => {
  const prefix = 'corrupt/';
  const s = await server(prefix);
  try {
    const first = await cutOut(s);
    await settled(s, 1);
    const [key] = await entryKeys(prefix);
    const entry = (await object(key!)).data;
    const corrupt = Buffer.from(entry);
    corrupt[corrupt.length - 30] = corrupt[corrupt.length - 30]! ^ 0xff;
    await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key!, Body: corrupt, Metadata: { 'matte-store': '1' } }));
    const again = await cutOut(s);
    assert.ok(again.body.equals(first.body));
    await settled(s, 2);
    assert.equal(await counts(s), { hit: 0, miss: 1, bad: 1, stored: 2, dropped: 0 });
    assert.ok((await object(key!)).data.equals(entry), 'replaced by the recomputed matte');
    assert.ok((await cutOut(s)).body.equals(first.body));
    assert.is((await counts(s)).hit, 1);
  } finally {
    await s.close();
  }
});

test("an entry past its lifetime is a miss and is swept; another application's object under an entry's name is never served, replaced or deleted", async () => {
  const prefix = 'ttl/';
  // A two-second lifetime: the sweeper runs every two seconds.
  const s = await server(prefix, { MATTE_MATTE_CACHE_TTL_SECONDS: '2' });
  const swept = (what: string) => waitFor(what, async () => (await entryKeys(prefix)).length === 0, { timeoutMs: 30_000 });
  try {
    const first = await cutOut(s);
    await settled(s, 1);
    const [key] = await entryKeys(prefix);
    const entry = (await object(key!)).data;
    await swept('the expired entry to be swept');
    assert.ok((await cutOut(s)).body.equals(first.body));
    await settled(s, 2);
    assert.equal(await counts(s), { hit: 0, miss: 2, bad: 0, stored: 2, dropped: 0 }, 'computed again');
    await swept('the second entry to be swept');
    // The same valid bytes without matte's marker, and another object named like an entry.
    const other = `${prefix}${AREA}${'e'.repeat(64)}`;
    await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key!, Body: entry }));
    await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: other, Body: 'not matte' }));
    assert.ok((await cutOut(s)).body.equals(first.body));
    await settled(s, 3);
    assert.equal(await counts(s), { hit: 0, miss: 3, bad: 0, stored: 2, dropped: 1 }, 'not served, not replaced');
    // A marked entry written after them: once a sweep deleted it, the sweeps saw them expired too.
    const decoy = `${prefix}${AREA}${'d'.repeat(64)}`;
    await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: decoy, Body: 'expires', Metadata: { 'matte-store': '1' } }));
    await waitFor('the marked entry to be swept', async () => !(await entryKeys(prefix)).includes(decoy), { timeoutMs: 30_000 });
    const kept = await object(key!);
    assert.ok(kept.data.equals(entry));
    assert.is(kept.marker, undefined);
    assert.is((await object(other)).data.toString(), 'not matte');
  } finally {
    await s.close();
  }
});

test('the area through the store: expiry before deletion, a hit renews, the bound evicts the least recently written, the results sweep never lists it', async () => {
  const prefix = 'unit/';
  let offset = 0;
  const now = () => Date.now() + offset;
  const store = new S3ResultStore({ bucket: s3.bucket, prefix, endpoint: s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, presign: false, ttlSeconds: 60, sweepIntervalMs: 0, now });
  await store.open();
  // Every entry here costs one object floor (4096 bytes): four of them pass 3.75 floors, three do not.
  const area = store.entries!({ name: 'matte-cache', ttlSeconds: 100, maxBytes: 3.75 * OBJECT_FLOOR_BYTES, maxEntries: 100 }) as S3Entries;
  const key = (n: number) => String(n).repeat(64);
  const written = async (n: number) => (await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `${prefix}${AREA}${key(n)}` }))).LastModified!.getTime();
  // The store keeps whole seconds: the next write is later once a second has passed.
  const aSecondAfter = (t: number) => waitFor('a second to pass', () => Date.now() - t > 1000);
  try {
    await area.put(key(1), Buffer.alloc(300, 1));
    await aSecondAfter(await written(1));
    await area.put(key(2), Buffer.alloc(300, 2));
    assert.equal(await area.get(key(2)), Buffer.alloc(300, 2));
    assert.is(await area.get('not-a-key'), undefined);
    // Past its lifetime: a miss, though still in the bucket.
    offset = 101_000;
    assert.is(await area.get(key(1)), undefined);
    assert.is((await entryKeys(prefix)).length, 2);
    // A hit on an entry older than a tenth of its lifetime writes it again after the answer.
    await aSecondAfter(await written(2));
    offset = 11_000;
    assert.equal(await area.get(key(1)), Buffer.alloc(300, 1));
    await waitFor('the renewed entry', async () => (await written(1)) > (await written(2)));
    offset = 0;
    // Over the bound (4 floors of 3.75): the least recently written goes (entry 2, not the renewed 1).
    await area.put(key(3), Buffer.alloc(300, 3));
    await area.put(key(4), Buffer.alloc(150, 4));
    await area.sweep();
    assert.equal((await entryKeys(prefix)).map((k) => k.slice(-1)).sort(), ['1', '3', '4']);
    // A result under the same prefix: the results' sweep counts it alone.
    await store.put(Buffer.alloc(10), { ext: 'png', mediaType: 'image/png' });
    await store.sweep();
    assert.equal(store.usage(), { results: 1, bytes: OBJECT_FLOOR_BYTES }, 'a 10-byte result counts one object floor');
  } finally {
    await area.close();
    await store.close();
    for (const k of await entryKeys(prefix)) await s3.client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: k }));
  }
});

test('a store that stalls: the cut-out is answered, the lookup is a miss and the write is dropped', async () => {
  const stalled = await startStalledEndpoint();
  const s = await server('stall/', { MATTE_S3_ENDPOINT: stalled.endpoint, MATTE_S3_TIMEOUT_SECONDS: '1' });
  try {
    const answer = await cutOut(s);
    assert.is(answer.status, 200, answer.body.toString());
    const c = await settled(s, 1);
    assert.equal(c, { hit: 0, miss: 1, bad: 0, stored: 0, dropped: 1 });
  } finally {
    await s.close();
    stalled.close();
  }
});

test.run();
