// The library's matte cache (lib/matte-cache.ts) with a cache of its own (a Map), through the real
// addon and u2netp: the second job on the same image is served the matte (a hit) and gives the
// same pixels as computing it; what the key holds decides what is shared; a corrupt, truncated or
// foreign entry, or a cache that throws, is recomputed and never used.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, loadModel, removeBackground, type MatteCache, type MatteCacheOutcome } from '../../lib/index.js';
import { fixture } from '../helpers/fixtures.js';
import { decode, makeGif } from '../helpers/images.js';
import { sleep } from '../helpers/server.js';

let photo: Buffer;

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
  await loadModel('u2netp');
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
