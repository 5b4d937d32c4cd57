// run-tests: parallel
// The server's matte cache on the disk store (server/matte-cache.ts, server/store/disk-entries.ts),
// through the real server on loopback and a small model (test/helpers/onnx.ts: the matte is the
// pixel's brightness; what the cache holds does not depend on which model made it): the second
// request for the same upload with another output is a hit (counted in /metrics) with the pixels a
// computed matte gives; a corrupt entry on disk is recomputed and replaced;
// MATTE_MATTE_CACHE_MAX_BYTES=0 turns it off; the size bound evicts. And the review's attacks: a
// FIFO in place of an entry (a mount that stopped answering) is a miss, never a stuck job or slot;
// two servers on one store whose model entries differ (same file, other post-processing) never
// serve each other's mattes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { edit } from '../../lib/index.js';
import type { ModelEntry } from '../../lib/models.js';
import { fixture } from '../helpers/fixtures.js';
import { brightnessModelEnv } from '../helpers/onnx.js';
import { scratchDir } from '../helpers/scratch.js';
import { get, post, scrapeMetrics, sleep, spawnServer, startTestServer, tempDir, TEST_KEY, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

let photo: Buffer;
let scratch = '';
scratchDir(test, 'matte-cache-model-', (path) => (scratch = path));
let model: ModelEntry & { path: string };
/** The servers' one model: the brightness graph. */
let modelEnv: Record<string, string> = {};

test.before(async () => {
  photo = (await edit(await fixture('lenna.png'), [{ resize: { width: 300 } }], { format: 'jpeg' })).data;
  ({ entry: model, env: modelEnv } = await brightnessModelEnv(scratch));
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
  const server = await startTestServer({ ...modelEnv, MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
  const plain = await startTestServer({ ...modelEnv, MATTE_MATTE_CACHE_MAX_BYTES: '0', MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
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
  const server = await startTestServer({ ...modelEnv, MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
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
  const server = await startTestServer({ ...modelEnv, MATTE_MATTE_CACHE_MAX_BYTES: '100', MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
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

test('a FIFO in place of an entry (a mount that stopped answering): a miss, counted; the job, its slot and the next request are answered', async () => {
  const server = await startTestServer({ ...modelEnv, MATTE_METRICS_ADDRESS: '127.0.0.1:0', MATTE_CONCURRENCY: '1' });
  try {
    const first = await cutOut(server);
    assert.is(first.status, 200);
    await settled(server, 1);
    const dir = join(server.resultsDir, 'matte-cache');
    const [name] = (await readdir(dir)).filter((f) => /^[0-9a-f]{64}$/.test(f));
    const { mtime } = await stat(join(dir, name!));
    await rm(join(dir, name!));
    execFileSync('mkfifo', ['-m', '600', join(dir, name!)]);
    await utimes(join(dir, name!), mtime, mtime); // unexpired: the lookup opens it
    const again = await cutOut(server);
    assert.is(again.status, 200, again.body.toString());
    assert.ok(again.body.equals(first.body), 'computed again');
    const c = await counts(server);
    assert.is(c.miss, 2, 'the FIFO is a miss');
    assert.is(c.hit, 0);
    // The slot is free: the only one (MATTE_CONCURRENCY=1) serves a plain edit at once.
    assert.equal((await (await get(server.url, '/readyz')).json()).jobs, { running: 0, waiting: 0 });
    assert.is((await post(server.url, '/images/edit', { input: photo, output: 'raw', operations: '[{"flip":"h"}]' })).status, 200);
    // The recomputed matte replaced the FIFO.
    await settled(server, 2);
    assert.ok((await stat(join(dir, name!))).isFile());
    assert.is((await cutOut(server)).status, 200);
    assert.is((await counts(server)).hit, 1);
  } finally {
    await server.close();
  }
});

test("two servers on one store, the same model file under other settings: each its own matte, never the other's", async () => {
  const shared = await tempDir('matte-shared-cache-');
  const models = async (name: string, postprocess: string) => {
    const file = join(shared, `${name}.json`);
    await writeFile(file, JSON.stringify({ models: { catalogue: { ...model, output: { ...model.output, postprocess } } } }));
    return file;
  };
  const env = (file: string) => ({ MATTE_API_KEYS: TEST_KEY, MATTE_RESULTS_DIR: join(shared, 'results'), MATTE_MODELS: 'catalogue', MATTE_MODELS_FILE: file, MATTE_MODELS_DIR: join(shared, 'none') });
  await rm(join(shared, 'results'), { force: true, recursive: true });
  const [first, second] = [await spawnServer(env(await models('first', 'minmax'))), await spawnServer(env(await models('second', 'clamp')))];
  const entries = async () => (await readdir(join(shared, 'results', 'matte-cache')).catch(() => [] as string[])).filter((f) => /^[0-9a-f]{64}$/.test(f));
  try {
    const a = await post(first.url, '/images/remove-background', { input: photo, output: 'raw', format: 'png' });
    assert.is(a.status, 200, a.body.toString());
    await waitFor("the first server's matte in the shared store", async () => (await entries()).length === 1);
    const b = await post(second.url, '/images/remove-background', { input: photo, output: 'raw', format: 'png' });
    assert.is(b.status, 200, b.body.toString());
    assert.not.ok(b.body.equals(a.body), "the second server answered the first's cut-out");
    await waitFor("the second server's own matte", async () => (await entries()).length === 2);
    const again = await post(second.url, '/images/remove-background', { input: photo, output: 'raw', format: 'png' });
    assert.ok(again.body.equals(b.body), 'each server hits its own entry');
  } finally {
    await first.stop();
    await second.stop();
    await rm(shared, { recursive: true, force: true });
  }
});

test.run();
