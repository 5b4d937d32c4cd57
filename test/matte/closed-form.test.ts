// The closed-form matting step (native/matte/closed_form.cc) is off by default and reached only
// through MATTE_REFINE_PARAMS (bench/quality's parameter search). When on, it must keep the
// refinement's guarantees: the matte byte-identical whatever the thread count (its conjugate
// gradients sum per row, then over the rows in order), and `refine: false` still the plain model.
// A real photograph (lenna.png, enlarged, its hair and feathers are textured near the outline)
// through the real addon and u2netp.
import { availableParallelism } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { configure, edit, loadModel, removeBackground } from '../../lib/index.js';
import { keepEnv } from '../helpers/env.js';
import { fixture } from '../helpers/fixtures.js';
import { decode } from '../helpers/images.js';

let photo: Buffer;
const restoreRefineParams = keepEnv('MATTE_REFINE_PARAMS');

test.before(async () => {
  configure();
  await loadModel('u2netp');
  const lenna = await fixture('lenna.png');
  photo = (await edit(lenna, [{ resize: { width: 803, height: 701, fit: 'cover' } }], { format: 'png' })).data;
});

test.after(() => {
  restoreRefineParams();
  configure();
});

async function cutOut(params: string, threads: number, refine = true) {
  process.env.MATTE_REFINE_PARAMS = params;
  configure({ threads });
  return decode((await removeBackground(photo, { refine })).data);
}

function alphaOf(img: { data: Uint8Array }): Buffer {
  const out = Buffer.alloc(img.data.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = img.data[i * 4 + 3]!;
  return out;
}

test('with the closed-form step on, the matte differs from the default and is the same on one thread and every core', async () => {
  const cores = availableParallelism();
  const off = alphaOf(await cutOut('', cores));
  // Working size 200 kilopixels: below the image's 563 kilopixels, so the guided upsampling runs too.
  const one = alphaOf(await cutOut('cf=200', 1));
  const every = alphaOf(await cutOut('cf=200', cores));
  assert.is(one.length, 803 * 701);
  let changed = 0;
  for (let i = 0; i < one.length; i++) if (one[i] !== off[i]) changed++;
  assert.ok(changed > 100, `the step changed ${changed} pixels`);
  assert.ok(Buffer.compare(one, every) === 0, 'the pixels differ between thread counts');
  // At full size (no upsampling) too.
  const fullOne = alphaOf(await cutOut('cf=4000', 1));
  const fullEvery = alphaOf(await cutOut('cf=4000', cores));
  assert.ok(Buffer.compare(fullOne, fullEvery) === 0, 'the full-size pixels differ between thread counts');
});

test('refine: false is the plain model whatever MATTE_REFINE_PARAMS says', async () => {
  const plain = alphaOf(await cutOut('', availableParallelism(), false));
  const withStep = alphaOf(await cutOut('cf=4000', availableParallelism(), false));
  assert.ok(Buffer.compare(plain, withStep) === 0, 'the plain matte changed');
});

test.run();
