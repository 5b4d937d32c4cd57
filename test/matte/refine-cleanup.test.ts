// The cleanup (native/matte/refine.cc clean_matte: values <= floor become 0, >= ceiling 255) is the
// refinement's last step and passes over runs of 0 and 255 a word at a time; it must stay the plain
// per-pixel rule for any floor and ceiling bench/quality's search may set (MATTE_REFINE_PARAMS),
// including a floor of 255, where opaque runs are not left as they are. A real photograph (lenna.png,
// enlarged to a width that is not a multiple of 8) through the real addon and u2netp.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, loadModel, removeBackground } from '../../lib/index.js';
import { keepEnv } from '../helpers/env.js';
import { fixture } from '../helpers/fixtures.js';
import { decode } from '../helpers/images.js';

let photo: Buffer;
const restoreRefineParams = keepEnv('MATTE_REFINE_PARAMS');

test.before(async () => {
  await loadModel('u2netp');
  const lenna = await fixture('lenna.png');
  photo = (await edit(lenna, [{ resize: { width: 701, height: 603, fit: 'cover' } }], { format: 'png' })).data;
});

test.after(() => {
  restoreRefineParams();
});

async function alphaWith(params: string): Promise<Buffer> {
  process.env.MATTE_REFINE_PARAMS = params;
  const image = await decode((await removeBackground(photo)).data);
  const alpha = Buffer.alloc(image.width * image.height);
  for (let i = 0; i < alpha.length; i++) alpha[i] = image.data[i * 4 + 3]!;
  return alpha;
}

test('the cleanup is the per-pixel rule applied to the uncleaned matte, for the default and other limits', async () => {
  // floor 0 and ceiling 255 snap nothing that is not 0 or 255 already: the matte before the cleanup.
  const raw = await alphaWith('floor=0,ceiling=255');
  let partial = 0, opaque = 0, clear = 0;
  for (const v of raw) (v === 0 ? clear++ : v === 255 ? opaque++ : partial++);
  assert.ok(partial > 100 && opaque > 1000 && clear > 1000, `${clear} clear, ${opaque} opaque, ${partial} partial`);
  for (const [floor, ceiling, params] of [[24, 231, ''], [100, 101, 'floor=100,ceiling=101'], [0, 128, 'floor=0,ceiling=128']] as const) {
    const cleaned = await alphaWith(params);
    assert.is(cleaned.length, raw.length);
    let wrong = 0;
    for (let i = 0; i < raw.length; i++) {
      const expected = raw[i]! <= floor ? 0 : raw[i]! >= ceiling ? 255 : raw[i]!;
      if (cleaned[i] !== expected) wrong++;
    }
    assert.is(wrong, 0, `floor ${floor}, ceiling ${ceiling}: ${wrong} pixels differ from the rule`);
  }
});

test('a floor of 255 makes every pixel transparent, opaque runs included', async () => {
  const cleaned = await alphaWith('floor=255,ceiling=255');
  assert.ok(cleaned.every((v) => v === 0), 'some pixel is not 0');
});

test.run();
