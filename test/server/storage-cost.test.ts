// run-tests: parallel
// The review's attack on the disk quotas: tiny results (and tiny cached mattes) counted by their
// length let a key holder store 100 times the bound in whole blocks, and inodes without end. Through
// the real server on loopback: MATTE_RESULTS_MAX_BYTES counts whole blocks of the file system,
// MATTE_RESULTS_MAX_ENTRIES and MATTE_MATTE_CACHE_MAX_ENTRIES bound the files, the matte cache's
// bytes count blocks too; and a sweep over an area far past its bound evicts the least recently
// used entries, down to 80%, reading the directory in batches.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, stat, statfs, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DiskEntries } from '../../server/store/disk-entries.js';
import { makePng } from '../helpers/images.js';
import { post, scrapeMetrics, startTestServer, type TestServer } from '../helpers/server.js';
import { scratchDir } from '../helpers/scratch.js';
import { waitFor } from '../helpers/wait.js';

let dir = '';
scratchDir(test, 'matte-storage-cost-', (path) => (dir = path));

/** A 2x2 PNG of its own colour: a url-output edit of it stores a result of a few dozen bytes. */
const tiny = (n: number) => makePng(2, 2, () => [n % 256, (n >> 8) % 256, 7], { alpha: false });
const store = (server: TestServer, n: number) => post(server.url, '/images/edit', { input: tiny(n), operations: '[{"flip":"h"}]', format: 'webp' });

/** Result files in the directory and the space they take (allocated blocks). */
async function results(resultsDir: string): Promise<{ files: number; bytes: number; allocated: number }> {
  let files = 0;
  let bytes = 0;
  let allocated = 0;
  for (const name of await readdir(resultsDir)) {
    if (!/^[A-Za-z0-9_-]{24}\.[a-z0-9]+$/.test(name)) continue;
    const info = await stat(join(resultsDir, name));
    files++;
    bytes += info.size;
    allocated += info.blocks * 512;
  }
  return { files, bytes, allocated };
}

test('64 tiny url-output edits under MATTE_RESULTS_MAX_BYTES=16384: only as many as whole blocks fit, then 507', async () => {
  const resultsDir = join(dir, 'bytes');
  await mkdir(resultsDir, { mode: 0o700 });
  const block = (await statfs(resultsDir)).bsize;
  const server = await startTestServer({ MATTE_RESULTS_DIR: resultsDir, MATTE_RESULTS_MAX_BYTES: '16384' });
  try {
    const statuses: number[] = [];
    for (let n = 0; n < 64; n++) statuses.push((await store(server, n)).status);
    const accepted = statuses.filter((s) => s === 200).length;
    assert.ok(accepted >= 1 && accepted <= Math.floor(16384 / block), `${accepted} accepted with ${block}-byte blocks`);
    assert.is(statuses.filter((s) => s === 507).length, 64 - accepted, 'the rest 507, nothing else');
    const held = await results(resultsDir);
    assert.is(held.files, accepted);
    assert.ok(held.bytes < 200 * accepted, `tiny results (${held.bytes} bytes)`);
    assert.ok(held.allocated <= 16384, `${held.allocated} bytes allocated`);
    const refused = await store(server, 999);
    assert.match(refused.json().error.message, /MATTE_RESULTS_MAX_BYTES, counted in whole blocks/);
    // The gauge says what the quota counts: whole blocks.
    await server.running.services.store.sweep();
    assert.is(server.running.services.store.usage()?.bytes, accepted * block);
  } finally {
    await server.close();
  }
});

test('MATTE_RESULTS_MAX_ENTRIES: the number of results is bounded whatever their size', async () => {
  const resultsDir = join(dir, 'entries');
  await mkdir(resultsDir, { mode: 0o700 });
  const server = await startTestServer({ MATTE_RESULTS_DIR: resultsDir, MATTE_RESULTS_MAX_ENTRIES: '5' });
  try {
    const statuses: number[] = [];
    for (let n = 0; n < 8; n++) statuses.push((await store(server, n)).status);
    assert.equal(statuses, [200, 200, 200, 200, 200, 507, 507, 507]);
    const refused = await store(server, 100);
    assert.is(refused.json().error.code, 'insufficient_storage');
    assert.match(refused.json().error.message, /5 results \(MATTE_RESULTS_MAX_ENTRIES\)/);
    assert.is((await results(resultsDir)).files, 5);
    assert.is((await post(server.url, '/images/edit', { input: tiny(1), operations: '[{"flip":"h"}]', output: 'raw' })).status, 200, 'raw output still works');
  } finally {
    await server.close();
  }
});

/** Waits (bounded) until the matte cache has stored or dropped `n` entries. */
async function settled(server: TestServer, n: number): Promise<void> {
  await waitFor('the matte cache writes', async () => {
    const text = await scrapeMetrics(server);
    const count = (o: string) => Number(new RegExp(`matte_matte_cache_total\\{outcome="${o}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
    return count('stored') + count('dropped') >= n;
  });
}

const entryFiles = async (resultsDir: string) => (await readdir(join(resultsDir, 'matte-cache'))).filter((f) => /^[0-9a-f]{64}$/.test(f));

test('the matte cache: tiny mattes counted in whole blocks, and MATTE_MATTE_CACHE_MAX_ENTRIES bounds the files', async () => {
  for (const [variable, bound] of [
    ['MATTE_MATTE_CACHE_MAX_ENTRIES', 3],
    ['MATTE_MATTE_CACHE_MAX_BYTES', 3],
  ] as const) {
    const resultsDir = join(dir, `cache-${variable}`);
    await mkdir(resultsDir, { mode: 0o700 });
    const block = (await statfs(resultsDir)).bsize;
    const value = variable === 'MATTE_MATTE_CACHE_MAX_BYTES' ? String(bound * block) : String(bound);
    const server = await startTestServer({ MATTE_RESULTS_DIR: resultsDir, [variable]: value, MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
    try {
      for (let n = 0; n < 10; n++) {
        const r = await post(server.url, '/images/remove-background', { input: makePng(16, 16, (x) => [x * 16, n * 20, 50], { alpha: false }), output: 'raw' });
        assert.is(r.status, 200, r.body.toString());
        await settled(server, n + 1);
        const held = await entryFiles(resultsDir);
        assert.ok(held.length <= bound, `${variable}=${value}: ${held.length} entries after ${n + 1} mattes`);
      }
    } finally {
      await server.close();
    }
  }
});

test('a sweep far past the bounds evicts the least recently used, down to 80%, in batches', async () => {
  const area = join(dir, 'eviction');
  await mkdir(area, { mode: 0o700 });
  const ttlSeconds = 3600;
  const now = Date.now();
  // 1000 entries whose expiries (last uses) spread over the lifetime, written in a shuffled order.
  const expiries = new Map<string, number>();
  for (let i = 0; i < 1000; i++) {
    const key = randomBytes(32).toString('hex');
    const expires = now + 60_000 + Math.floor(((ttlSeconds * 1000 - 120_000) * ((i * 7919) % 1000)) / 1000);
    await writeFile(join(area, key), Buffer.alloc(10));
    await utimes(join(area, key), expires / 1000, expires / 1000);
    expiries.set(key, expires);
  }
  await writeFile(join(area, 'not-an-entry.txt'), 'left alone');
  const entries = new DiskEntries({ dir: area, ttlSeconds, maxBytes: Number.MAX_SAFE_INTEGER, maxEntries: 100, sweepIntervalMs: 0 });
  try {
    await entries.sweep();
    const kept = (await readdir(area)).filter((f) => expiries.has(f));
    assert.is(kept.length, 80, 'down to 80% of the bound');
    const newest = [...expiries.values()].sort((a, b) => b - a);
    const oldestKept = Math.min(...kept.map((k) => expiries.get(k)!));
    // The 80 kept are the latest used, to the plan's precision (one 256th of the lifetime).
    assert.ok(oldestKept >= newest[79]! - (ttlSeconds * 1000) / 256, 'the least recently used went first');
    assert.ok((await readdir(area)).includes('not-an-entry.txt'));
    // A lookup does not wait for a sweep, and reads the entry.
    assert.is((await entries.get(kept[0]!))?.length, 10);
  } finally {
    await entries.close();
  }
});

test.run();
