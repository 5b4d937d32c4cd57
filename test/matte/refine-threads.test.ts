// run-tests: parallel
// The refinement's full-resolution passes run in bands of rows on the job's threads
// (native/matte/refine_bands.h): the matte must be byte-identical whatever the thread count. A
// real photograph (lenna.png) enlarged (and cropped) to a size whose height is not a multiple of the band, so
// the last band is partial and the subject's outline crosses many bands, through the real addon
// and u2netp, once on one thread and once on every core (lib/job.ts sets libvips' count,
// which the refinement follows). bench/quality/tune's `refine-tune MODEL --time=IMAGE` checks 2,
// 3, 5 and 8 threads on a 12 MP photograph.
import { availableParallelism } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { configure, edit, loadModel, removeBackground } from '../../lib/index.js';
import { fixture } from '../helpers/fixtures.js';
import { decode } from '../helpers/images.js';

let photo: Buffer;

test.before(async () => {
  configure();
  await loadModel('u2netp');
  const lenna = await fixture('lenna.png');
  photo = (await edit(lenna, [{ resize: { width: 1203, height: 1037, fit: 'cover' } }], { format: 'png' })).data;
});

test.after(() => {
  configure();
});

async function cutOut(threads: number) {
  configure({ threads });
  return decode((await removeBackground(photo)).data);
}

test('the refined cut-out on one thread and on every core is byte-identical', async () => {
  const one = await cutOut(1);
  const every = await cutOut(availableParallelism());
  assert.is(one.width, 1203);
  assert.is(one.height, 1037);
  assert.is(every.width, one.width);
  assert.is(every.height, one.height);
  // Not a trivial matte: transparent, opaque and partial pixels all occur, so the refinement ran
  // along an outline across the bands.
  const seen = new Set<number>();
  for (let i = 3; i < one.data.length; i += 4) seen.add(one.data[i]!);
  assert.ok(seen.has(0) && seen.has(255), 'both transparent and opaque pixels');
  assert.ok(seen.size > 20, `${seen.size} distinct alpha values`);
  assert.ok(Buffer.compare(Buffer.from(one.data), Buffer.from(every.data)) === 0, 'the pixels differ');
});

test('the refined cut-out is the same on every run (the bands are taken in any order)', async () => {
  const first = await cutOut(availableParallelism());
  const second = await cutOut(availableParallelism());
  assert.ok(Buffer.compare(Buffer.from(first.data), Buffer.from(second.data)) === 0, 'the pixels differ');
});

test.run();
