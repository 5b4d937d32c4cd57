// run-tests: parallel
// The cleanup (native/matte/refine.cc clean_matte: values <= 24 become 0, >= 231 become 255) is the
// refinement's last step and passes over runs of 0 and 255 a word at a time; what a user gets must
// be the per-pixel rule: no value left within the snapped ranges, partial values kept between them.
// A real photograph (lenna.png, enlarged to a width that is not a multiple of 8) through the real
// addon and u2netp.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, loadModel, removeBackground } from '../../lib/index.js';
import { fixture } from '../helpers/fixtures.js';
import { decode } from '../helpers/images.js';

let photo: Buffer;

test.before(async () => {
  await loadModel('u2netp');
  const lenna = await fixture('lenna.png');
  photo = (await edit(lenna, [{ resize: { width: 701, height: 603, fit: 'cover' } }], { format: 'png' })).data;
});

test('the refined matte holds 0, 255 and partial values between the cleanup limits, none within them', async () => {
  const image = await decode((await removeBackground(photo)).data);
  let partial = 0, opaque = 0, clear = 0, snapped = 0;
  for (let i = 0; i < image.width * image.height; i++) {
    const v = image.data[i * 4 + 3]!;
    if (v === 0) clear++;
    else if (v === 255) opaque++;
    else if (v <= 24 || v >= 231) snapped++;
    else partial++;
  }
  assert.ok(partial > 100 && opaque > 1000 && clear > 1000, `${clear} clear, ${opaque} opaque, ${partial} partial`);
  assert.is(snapped, 0, 'pixels within the cleanup limits were left');
});

test.run();
