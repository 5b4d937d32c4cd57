// run-tests: parallel
// size (docs/api.md, "Extensions: staged cut-outs"): a cap in megapixels with remove.bg's names,
// aspect kept, never enlarging; as the first operation the decoder shrinks on load, so a 24 MP
// JPEG asked for a preview is never decoded at full size (the addon's decoded-bytes counter).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { addon } from '../../lib/native.js';
import { edit, MatteError, SIZE_MEGAPIXELS, type SizeValue } from '../../lib/index.js';
import { gradient, solid } from '../helpers/images.js';

const decodedBytes = () => (addon as unknown as { counters: () => { decodedBytes: number } }).counters().decodedBytes;

/** A W x H JPEG made by the addon (the test does not encode 24 MP itself). */
async function jpeg(width: number, height: number): Promise<Buffer> {
  return (await edit(gradient(64, 48), [{ resize: { width, height, fit: 'cover' } }], { format: 'jpeg' })).data;
}

let photo: Buffer;
test.before(async () => {
  photo = await jpeg(6000, 4000); // 24 MP
});

test('each named size gives at most its megapixels, the aspect kept, decoding no more than needed', async () => {
  const full = 6000 * 4000 * 3;
  for (const name of ['preview', 'medium', 'hd'] as const) {
    const cap = SIZE_MEGAPIXELS[name]! * 1e6;
    const before = decodedBytes();
    const out = await edit(photo, [{ size: name }], { format: 'jpeg' });
    const decoded = decodedBytes() - before;
    assert.ok(out.width * out.height <= cap, `${name}: ${out.width}x${out.height}`);
    // The largest size within the cap: one more pixel on either side would pass it.
    assert.ok((out.width + 1) * (out.height + 1) > cap, `${name}: ${out.width}x${out.height} is not the largest`);
    assert.ok(Math.abs(out.width / out.height - 1.5) < 0.01, `${name}: aspect ${out.width / out.height}`);
    // The JPEG shrinks by 2, 4 or 8 while leaving lanczos3 at least 1.25x (docs/api.md, "Input").
    const factor = Math.sqrt((6000 * 4000) / cap);
    const shrink = [8, 4, 2].find((s) => s * 1.25 <= factor) ?? 1;
    assert.is(decoded, full / (shrink * shrink), `${name}: ${decoded} bytes decoded (a shrink of ${shrink})`);
  }
});

test('full and auto keep the size; a cap above the image does not enlarge it', async () => {
  const small = gradient(300, 200);
  for (const size of ['full', 'auto', 'hd', { megapixels: 0.06 }] as SizeValue[]) {
    const out = await edit(small, [{ size }]);
    assert.equal([out.width, out.height], [300, 200], JSON.stringify(size));
  }
  const capped = await edit(small, [{ size: { megapixels: 0.01 } }]);
  assert.equal([capped.width, capped.height], [122, 81]); // floor(300 s) x floor(200 s), s = sqrt(10000 / 60000)
});

test('size after other steps caps the image at that step', async () => {
  const out = await edit(solid(100, 100, [1, 2, 3]), [{ resize: { width: 400 } }, { size: { megapixels: 0.04 } }]);
  assert.equal([out.width, out.height], [200, 200]);
});

test('an unknown size or megapixels out of range is refused at its path', async () => {
  for (const size of ['small', { megapixels: 0 }, { megapixels: 101 }, { mp: 1 }]) {
    try {
      await edit(photo, [{ size: size as SizeValue }]);
      assert.unreachable(JSON.stringify(size));
    } catch (err) {
      assert.instance(err, MatteError);
      assert.is((err as MatteError).code, 'invalid_operations');
      assert.ok((err as MatteError).path?.startsWith('operations[0].size'), (err as MatteError).path);
    }
  }
});

test.run();
