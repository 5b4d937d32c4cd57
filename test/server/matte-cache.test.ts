// The server's matte cache on the disk store (server/matte-cache.ts, server/store/disk-entries.ts),
// through the real server on loopback and u2netp: the second request for the same upload with
// another output is a hit (counted in /metrics) with the pixels a computed matte gives; a corrupt
// entry on disk is recomputed and replaced; MATTE_MATTE_CACHE_MAX_BYTES=0 turns it off; the size
// bound evicts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { edit } from '../../lib/index.js';
import { fixture } from '../helpers/fixtures.js';
import { post, scrapeMetrics, sleep, startTestServer, type TestServer } from '../helpers/server.js';

let photo: Buffer;

test.before(async () => {
  photo = (await edit(await fixture('lenna.png'), [{ resize: { width: 300 } }], { format: 'jpeg' })).data;
});

function count(metrics: string, outcome: string): number {
  return Number(new RegExp(`matte_matte_cache_total\\{outcome="${outcome}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
}

async function counts(server: TestServer): Promise<Record<string, number>> {
  const text = await scrapeMetrics(server);
  return Object.fromEntries(['hit', 'miss', 'bad', 'stored', 'dropped'].map((o) => [o, count(text, o)]));
}

/** Waits (bounded) until the cache has stored (or dropped) `n` entries. */
async function settled(server: TestServer, n: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const c = await counts(server);
    if (c.stored! + c.dropped! >= n) return;
    await sleep(10);
  }
  throw new Error('the matte was not stored');
}

const cutOut = (server: TestServer, format = 'png') => post(server.url, '/images/remove-background', { input: photo, output: 'raw', format });
const onWhite = (server: TestServer) =>
  post(server.url, '/images/edit', { input: photo, output: 'raw', format: 'png', operations: JSON.stringify([{ removeBackground: true }, { background: '#fff' }]) });

test('on by default: a second request for the same image is a hit, with the same pixels', async () => {
  const server = await startTestServer({ MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
  const plain = await startTestServer({ MATTE_MATTE_CACHE_MAX_BYTES: '0', MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
  try {
    const first = await cutOut(server);
    assert.is(first.status, 200, first.body.toString());
    await settled(server, 1);
    const files = await readdir(join(server.resultsDir, 'matte-cache'));
    assert.is(files.filter((f) => /^[0-9a-f]{64}$/.test(f)).length, 1);
    const second = await onWhite(server);
    assert.is(second.status, 200);
    assert.equal(await counts(server), { hit: 1, miss: 1, bad: 0, stored: 1, dropped: 0 });
    assert.ok(second.body.equals((await onWhite(plain)).body), 'the bytes of a computed matte');
    // Off: no directory, nothing counted.
    await cutOut(plain);
    assert.equal(await counts(plain), { hit: 0, miss: 0, bad: 0, stored: 0, dropped: 0 });
    assert.is((await readdir(plain.resultsDir)).includes('matte-cache'), false);
  } finally {
    await server.close();
    await plain.close();
  }
});

test('a corrupt entry on disk is recomputed and replaced, never served', async () => {
  const server = await startTestServer({ MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
  try {
    const first = await cutOut(server);
    await settled(server, 1);
    const dir = join(server.resultsDir, 'matte-cache');
    const [name] = (await readdir(dir)).filter((f) => /^[0-9a-f]{64}$/.test(f));
    const entry = await readFile(join(dir, name!));
    const corrupt = Buffer.from(entry);
    corrupt[corrupt.length - 30] = corrupt[corrupt.length - 30]! ^ 0xff;
    const { mtime } = await stat(join(dir, name!));
    await writeFile(join(dir, name!), corrupt);
    await utimes(join(dir, name!), mtime, mtime); // the entry's mtime is its expiry: keep it
    const again = await cutOut(server);
    assert.ok(again.body.equals(first.body));
    await settled(server, 2);
    assert.equal(await counts(server), { hit: 0, miss: 1, bad: 1, stored: 2, dropped: 0 });
    assert.ok((await readFile(join(dir, name!))).equals(entry), 'replaced by the recomputed matte');
    assert.ok((await cutOut(server)).body.equals(first.body));
    assert.is((await counts(server)).hit, 1);
  } finally {
    await server.close();
  }
});

test('the size bound: an entry larger than the cache is dropped', async () => {
  const server = await startTestServer({ MATTE_MATTE_CACHE_MAX_BYTES: '100', MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
  try {
    assert.is((await cutOut(server)).status, 200);
    await settled(server, 1);
    assert.is((await counts(server)).dropped, 1);
    assert.is((await cutOut(server)).status, 200);
    assert.is((await counts(server)).hit, 0);
  } finally {
    await server.close();
  }
});

test.run();
