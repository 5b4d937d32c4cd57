// run-tests: parallel
// Format `auto` (docs/api.md, "Extensions: staged cut-outs"): PNG where the result has an alpha
// below 255, JPEG where it has none; the result says which.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit } from '../../lib/index.js';
import { disc, formatOf, gradient, makeGif, solid } from '../helpers/images.js';

test('transparency gives PNG, none gives JPEG', async () => {
  const cutout = disc(60, 40, 15, [200, 10, 10, 255], [0, 0, 0, 0]);
  const transparent = await edit(cutout, [{ flip: 'h' }], { format: 'auto' });
  assert.is(formatOf(transparent.data), 'png');
  assert.is(transparent.format, 'png');
  assert.is(transparent.mediaType, 'image/png');
  const flattened = await edit(cutout, [{ background: '#fff' }], { format: 'auto' });
  assert.is(formatOf(flattened.data), 'jpeg');
  assert.is(flattened.format, 'jpeg');
  assert.is(flattened.mediaType, 'image/jpeg');
  // An alpha band whose every value is 255 is no transparency.
  const opaqueAlpha = await edit(solid(30, 20, [1, 2, 3, 255]), [{ flip: 'v' }], { format: 'auto' });
  assert.is(opaqueAlpha.format, 'jpeg');
  // One pixel of 254 is.
  const one = disc(30, 20, 2, [1, 2, 3, 254], [1, 2, 3, 255]);
  assert.is((await edit(one, [{ flip: 'h' }], { format: 'auto' })).format, 'png');
  const rgb = await edit(gradient(30, 20), [{ rotate: 90 }], { format: 'auto' });
  assert.is(rgb.format, 'jpeg');
});

test('an animation in auto is its first frame, as PNG or JPEG', async () => {
  const gif = makeGif(16, 16, [[255, 0, 0], [0, 0, 255]]);
  const out = await edit(gif, [{ flip: 'h' }], { format: 'auto' });
  assert.is(out.frames, 1);
  assert.is(out.format, 'jpeg');
});

test.run();
