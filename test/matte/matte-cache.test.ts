// run-tests: parallel
// The library's matte cache (lib/matte-cache.ts) with a cache of its own (a Map), through the real
// addon and a small model (test/helpers/onnx.ts: the matte is the pixel's brightness; what the
// cache holds and keys does not depend on which model made the matte): the second job on the same
// image is served the matte (a hit) and gives the same pixels as computing it; what the key holds
// decides what is shared (the model's entry settings included); a corrupt, truncated or foreign
// entry, an answer that is not bytes, or a cache that throws, is recomputed and never used; a cache
// that never answers costs a miss (or a dropped write), and the job's timeout and signal stop a job
// waiting on one.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { edit, loadModel, MatteError, removeBackground, type MatteCache, type MatteCacheOutcome } from '../../lib/index.js';
import type { ModelEntry } from '../../lib/models.js';
import { LOOKUP_DEADLINE_MS, WRITE_DEADLINE_MS } from '../../lib/matte-cache.js';
import { scratchDir } from '../helpers/scratch.js';
import { waitFor } from '../helpers/wait.js';
import { fixture } from '../helpers/fixtures.js';
import { decode, makeGif } from '../helpers/images.js';
import { brightnessModel } from '../helpers/onnx.js';
import { sleep } from '../helpers/server.js';

let photo: Buffer;
let model: ModelEntry & { path: string };
let dir = '';
scratchDir(test, 'matte-cache-lib-', (path) => (dir = path));

class MapCache implements MatteCache {
  readonly entries = new Map<string, Uint8Array>();
  readonly outcomes: MatteCacheOutcome[] = [];
  get(key: string) {
    return this.entries.get(key);
  }
  put(key: string, entry: Uint8Array) {
    this.entries.set(key, entry);
  }
  report(outcome: MatteCacheOutcome) {
    this.outcomes.push(outcome);
  }
  /** Waits (bounded) until the background put of the last job has ended. */
  async settled(count: number): Promise<void> {
    for (let i = 0; i < 400 && this.outcomes.filter((o) => o === 'stored' || o === 'dropped').length < count; i++) await sleep(10);
  }
}

test.before(async () => {
  model = await brightnessModel(dir, 'brightness', 64);
  await loadModel('brightness', { entry: model, path: model.path });
  const lenna = await fixture('lenna.png');
  photo = (await edit(lenna, [{ resize: { width: 400 } }], { format: 'jpeg' })).data;
});

test('a second job on the same image uses the cached matte: the same pixels as computing it', async () => {
  const cache = new MapCache();
  const plain = await edit(photo, [{ removeBackground: true }, { background: '#ffffff' }], { format: 'png' });
  const first = await edit(photo, [{ removeBackground: true }], { format: 'png', matteCache: cache });
  await cache.settled(1);
  assert.equal(cache.outcomes, ['miss', 'stored']);
  assert.is(cache.entries.size, 1);
  const second = await edit(photo, [{ removeBackground: true }, { background: '#ffffff' }], { format: 'png', matteCache: cache });
  assert.equal(cache.outcomes, ['miss', 'stored', 'hit']);
  assert.ok(second.data.equals(plain.data), 'a hit gives the bytes a computed matte gives');
  const again = await removeBackground(photo, { format: 'png', matteCache: cache });
  assert.equal(cache.outcomes.at(-1), 'hit');
  assert.ok(again.data.equals(first.data));
  await removeBackground(photo, { format: 'webp', matteCache: cache });
  assert.equal(cache.outcomes.at(-1), 'hit', 'another format');
});

test('what the key holds: other steps before, refine, the input bytes make other entries; steps after do not', async () => {
  const cache = new MapCache();
  await edit(photo, [{ removeBackground: true }, { resize: { width: 100 } }], { format: 'png', matteCache: cache });
  await cache.settled(1);
  await edit(photo, [{ removeBackground: true }, { flip: 'h' }], { format: 'jpeg', matteCache: cache });
  assert.is(cache.entries.size, 1);
  await edit(photo, [{ resize: { width: 200 } }, { removeBackground: true }], { format: 'png', matteCache: cache });
  await edit(photo, [{ removeBackground: { refine: false } }], { format: 'png', matteCache: cache });
  const other = (await edit(photo, [{ brightness: 1.1 }], { format: 'jpeg' })).data;
  await removeBackground(other, { matteCache: cache });
  await cache.settled(4);
  assert.is(cache.entries.size, 4);
  assert.equal(cache.outcomes.filter((o) => o === 'hit').length, 1);
});

test('a corrupt, truncated or foreign entry, or a failing cache, is recomputed, never used', async () => {
  const cache = new MapCache();
  const good = await removeBackground(photo, { matteCache: cache });
  await cache.settled(1);
  const [key, entry] = [...cache.entries][0]!;
  const corrupt = Buffer.from(entry);
  corrupt[corrupt.length - 20] = corrupt[corrupt.length - 20]! ^ 0x5a;
  const cases: Array<[string, Uint8Array]> = [
    ['corrupt', corrupt],
    ['truncated', entry.subarray(0, entry.length - 100)],
    ['empty', new Uint8Array(0)],
    ['not an entry', Buffer.from('hello')],
  ];
  let stored = 1;
  for (const [what, bytes] of cases) {
    cache.entries.set(key, bytes);
    const before = cache.outcomes.length;
    const out = await removeBackground(photo, { matteCache: cache });
    assert.ok(out.data.equals(good.data), what);
    assert.is(cache.outcomes[before], 'bad', what);
    await cache.settled(++stored); // the recomputed matte replaces the bad entry
    assert.ok(Buffer.from(cache.entries.get(key)!).equals(Buffer.from(entry)), `${what}: replaced`);
  }
  // Another key's entry under this key: refused by the key it names.
  const other = new MapCache();
  await removeBackground(photo, { refine: false, matteCache: other });
  await other.settled(1);
  cache.entries.set(key, [...other.entries.values()][0]!);
  const out = await removeBackground(photo, { matteCache: cache });
  assert.ok(out.data.equals(good.data), 'foreign');
  const failing: MatteCache = {
    get: () => Promise.reject(new Error('down')),
    put: () => {
      throw new Error('down');
    },
  };
  assert.ok((await removeBackground(photo, { matteCache: failing })).data.equals(good.data), 'failing cache');
});

test('a get answering anything but bytes (a string, an ArrayBuffer, an object, a number, another header) is bad: recomputed, never a TypeError', async () => {
  const cache = new MapCache();
  const good = await removeBackground(photo, { matteCache: cache });
  await cache.settled(1);
  const [key, entry] = [...cache.entries][0]!;
  const header = Buffer.from(entry);
  header.write('matte-cache-9', 0, 'latin1');
  const answers: Array<[string, unknown]> = [
    ['a string', Buffer.from(entry).toString('latin1')],
    ['an ArrayBuffer', entry.buffer.slice(entry.byteOffset, entry.byteOffset + entry.byteLength)],
    ['an object', { data: entry }],
    ['a number', 42],
    ['true', true],
    ['an array of numbers', [...entry.subarray(0, 64)]],
    ['a Float32Array', new Float32Array(16)],
    ['a DataView', new DataView(entry.buffer, entry.byteOffset, entry.byteLength)],
    ['another format header', header],
  ];
  for (const [what, answer] of answers) {
    const odd: MatteCache & { outcomes: MatteCacheOutcome[] } = {
      outcomes: [],
      get: (k) => (k === key ? (answer as Uint8Array) : undefined),
      put: () => {},
      report(outcome) {
        this.outcomes.push(outcome);
      },
    };
    const out = await removeBackground(photo, { matteCache: odd });
    assert.ok(out.data.equals(good.data), what);
    assert.is(odd.outcomes[0], 'bad', what);
    assert.is(odd.outcomes.includes('hit'), false, what);
  }
  // A matteCache that is not a cache: a clear invalid_option, before any work.
  for (const notACache of [{}, { get: () => undefined }, 'cache', 5, null]) {
    const error = await removeBackground(photo, { matteCache: notACache as never }).then(() => undefined, (err: MatteError) => err);
    assert.instance(error, MatteError);
    assert.is(error!.code, 'invalid_option');
    assert.is(error!.path, 'matteCache');
  }
});

/** A cache whose lookups and writes never answer (a mount that stopped answering), counting calls. */
function stuckCache(): MatteCache & { outcomes: MatteCacheOutcome[]; gets: number; puts: number } {
  return {
    outcomes: [],
    gets: 0,
    puts: 0,
    get() {
      this.gets++;
      return new Promise<undefined>(() => {});
    },
    put() {
      this.puts++;
      return new Promise<void>(() => {});
    },
    report(outcome) {
      this.outcomes.push(outcome);
    },
  };
}

/** Milliseconds a promise takes to settle, and how. */
async function settles(job: Promise<unknown>): Promise<{ ms: number; error?: MatteError }> {
  const started = performance.now();
  const error = await job.then(() => undefined, (err: MatteError) => err);
  return { ms: performance.now() - started, error };
}

test('a cache that never answers: a miss after the lookup deadline, the job computes, the write is dropped after its own', async () => {
  const good = await removeBackground(photo, {});
  const cache = stuckCache();
  const started = performance.now();
  const out = await removeBackground(photo, { matteCache: cache });
  assert.ok(out.data.equals(good.data));
  assert.is(cache.gets, 1);
  assert.equal(cache.outcomes, ['miss']);
  assert.ok(performance.now() - started < LOOKUP_DEADLINE_MS + 20_000, 'answered');
  await waitFor('the stuck write to be dropped', () => cache.outcomes.includes('dropped'), { timeoutMs: WRITE_DEADLINE_MS + 10_000 });
  assert.is(cache.puts, 1);
});

test('removeBackground with timeout: 1, or an aborted signal, settles promptly with a stuck cache', async () => {
  // timeout: 1 s. The lookup gets at most a quarter of it, then the job runs on what is left.
  const timed = await settles(removeBackground(photo, { timeout: 1, matteCache: stuckCache() }));
  assert.ok(timed.ms < 5000, `settled after ${timed.ms.toFixed(0)} ms`);
  if (timed.error) assert.is(timed.error.code, 'job_timeout');
  // Aborted before the call, and while the lookup waits.
  const before = new AbortController();
  before.abort(new Error('gone'));
  const early = await settles(removeBackground(photo, { signal: before.signal, matteCache: stuckCache() }));
  assert.is(early.error?.code, 'aborted');
  assert.ok(early.ms < 1000, `settled after ${early.ms.toFixed(0)} ms`);
  const during = new AbortController();
  const cache = stuckCache();
  const pending = settles(removeBackground(photo, { signal: during.signal, timeout: 0, matteCache: cache }));
  await waitFor('the lookup to start', () => cache.gets === 1);
  during.abort(new Error('client gone'));
  const late = await pending;
  assert.is(late.error?.code, 'aborted');
  assert.is((late.error?.cause as Error).message, 'client gone');
  assert.ok(late.ms < LOOKUP_DEADLINE_MS, `settled after ${late.ms.toFixed(0)} ms: before the lookup's deadline`);
});

test("the key covers the model entry's settings: the same file under other settings is another matte", async () => {
  const { path, ...entry } = model;
  const file = join(dir, 'shared.onnx');
  await copyFile(path, file);
  const cache = new MapCache();
  await loadModel('same-file', { entry, path: file });
  const first = await removeBackground(photo, { model: 'same-file', matteCache: cache });
  await cache.settled(1);
  // The same name and file, another post-processing (a custom entry changed, a rollout).
  await loadModel('same-file', { entry: { ...entry, output: { ...entry.output, postprocess: 'minmax' } }, path: file });
  const second = await removeBackground(photo, { model: 'same-file', matteCache: cache });
  await cache.settled(2);
  assert.equal(cache.outcomes, ['miss', 'stored', 'miss', 'stored']);
  assert.is(cache.entries.size, 2);
  assert.not.ok(second.data.equals(first.data), "the other settings' own matte");
  // Other normalisation: another key too; the same settings written in another key order: the same key.
  await loadModel('same-file', { entry: { ...entry, input: { ...entry.input, mean: [0.5, 0.5, 0.5] } }, path: file });
  await removeBackground(photo, { model: 'same-file', matteCache: cache });
  assert.is(cache.outcomes.at(-1), 'miss');
  const reordered = { ...entry, output: { postprocess: entry.output.postprocess, name: entry.output.name }, input: { std: entry.input.std, mean: entry.input.mean, divide: entry.input.divide, height: entry.input.height, width: entry.input.width } };
  await loadModel('same-file', { entry: reordered, path: file });
  await removeBackground(photo, { model: 'same-file', matteCache: cache });
  assert.is(cache.outcomes.at(-1), 'hit');
});

test('an animation keeps one matte a frame: nothing handed over; its first frame alone is cached', async () => {
  const cache = new MapCache();
  const gif = makeGif(64, 48, [[200, 30, 30], [30, 200, 30], [30, 30, 200]]);
  const all = await edit(gif, [{ removeBackground: true }], { format: 'gif', matteCache: cache });
  assert.is(all.frames, 3);
  assert.equal(cache.outcomes, ['miss']);
  const still = await edit(gif, [{ removeBackground: true }], { format: 'png', matteCache: cache });
  await cache.settled(1);
  assert.is((await decode(still.data)).width, 64);
  assert.equal(cache.outcomes, ['miss', 'miss', 'stored']);
  const again = await edit(gif, [{ removeBackground: true }], { format: 'gif', matteCache: cache });
  assert.is(again.frames, 3);
  assert.ok(again.data.equals(all.data), 'the frames computed, not the first frame\'s matte');
  assert.equal(cache.outcomes.at(-1), 'miss');
  // A still output of any format shares the first frame's matte.
  await edit(gif, [{ removeBackground: true }], { format: 'webp', anim: false, matteCache: cache });
  assert.equal(cache.outcomes.at(-1), 'hit');
});

test.run();
