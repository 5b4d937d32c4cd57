// run-tests: parallel
// The staged cut-out around removeBackground (docs/api.md, "Extensions: staged cut-outs"), through
// the real addon and u2netp: the region of interest, the hard matte, the foreground box followed
// through later steps, the matte cache serving every staging of one matte, and removeBackground()'s
// staging options. Mattes are handed in (test/helpers/given-matte.ts) where the test must know them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { addon } from '../../lib/native.js';
import { edit, loadModel, MatteError, removeBackground, type MatteCache, type MatteCacheOutcome, type Operation } from '../../lib/index.js';
import { alphaBox } from '../helpers/alpha-box.js';
import { fixture } from '../helpers/fixtures.js';
import { givenMatte, matteOf } from '../helpers/given-matte.js';
import { decode, formatOf, makePng, solid } from '../helpers/images.js';
import { sleep } from '../helpers/server.js';

const counters = () => (addon as unknown as { counters: () => { trackedBytes: number } }).counters();

const W = 160, H = 120; // 0.0192 MP
const photo = makePng(W, H, (x, y) => [60 + x, 180 - y, 120], { alpha: false });
// A soft disc, radius 40, centred: partial alpha over ~4 px.
const soft = matteOf(W, H, (x, y) => Math.max(0, Math.min(255, Math.round((40 - Math.hypot(x + 0.5 - 80, y + 0.5 - 60)) * 64 + 128))));

let lenna: Buffer;
test.before(async () => {
  await loadModel('u2netp');
  lenna = (await edit(await fixture('lenna.png'), [{ resize: { width: 320 } }], { format: 'jpeg' })).data;
});

const alphaAt = (image: { data: Buffer; width: number }, x: number, y: number) => image.data[(y * image.width + x) * 4 + 3]!;

test('roi: nothing outside the region is foreground; inside, the matte the whole image gave', async () => {
  const whole = await decode((await edit(lenna, [{ removeBackground: true }])).data);
  const roi: [number, number, number, number] = [40, 30, 200, 250];
  const cut = await decode((await edit(lenna, [{ removeBackground: { roi } }])).data);
  let outside = 0, differ = 0;
  for (let y = 0; y < cut.height; y++)
    for (let x = 0; x < cut.width; x++) {
      const inRoi = x >= roi[0] && x < roi[2] && y >= roi[1] && y < roi[3];
      if (!inRoi && alphaAt(cut, x, y) !== 0) outside++;
      if (inRoi && alphaAt(cut, x, y) !== alphaAt(whole, x, y)) differ++;
    }
  assert.is(outside, 0, 'foreground outside the region');
  assert.is(differ, 0, 'the model saw the whole image: the same matte inside');
  // Percentages of the width and height.
  const half = await decode((await edit(photo, [{ removeBackground: { roi: ['0%', '0%', '50%', '100%'] } }], { matteCache: givenMatte(soft, W, H) })).data);
  assert.is(alphaAt(half, 79, 60), 255);
  assert.is(alphaAt(half, 80, 60), 0);
});

test('a region outside the image is refused at its path before any pixel is decoded', async () => {
  const big = (await edit(solid(40, 30, [9, 9, 9]), [{ resize: { width: 4000, height: 3000 } }], { format: 'jpeg' })).data;
  const before = counters().trackedBytes;
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, counters().trackedBytes)), 1);
  try {
    await edit(big, [{ removeBackground: { roi: [0, 0, 4001, 10] } }]);
    assert.unreachable();
  } catch (err) {
    assert.instance(err, MatteError);
    assert.is((err as MatteError).code, 'invalid_operations');
    assert.is((err as MatteError).path, 'operations[0].removeBackground.roi');
    assert.match((err as MatteError).message, /lies outside the image/);
  } finally {
    clearInterval(timer);
  }
  assert.ok(peak - before < 4_000_000, `libvips tracked ${peak - before} bytes more (a decode is 36 MB)`);
  for (const roi of [[0, 0, 10], [10, 0, 5, 5], [0, 0, '101%', 5], [-1, 0, 1, 1]]) {
    try {
      await edit(photo, [{ removeBackground: { roi } } as Operation]);
      assert.unreachable(JSON.stringify(roi));
    } catch (err) {
      assert.is((err as MatteError).code, 'invalid_operations');
      assert.ok((err as MatteError).path?.startsWith('operations[0].removeBackground'), (err as MatteError).path);
    }
  }
});

test('semitransparency false: alpha 0 or 255 except one antialiased pixel inside the edge', async () => {
  const out = await decode((await edit(photo, [{ removeBackground: { semitransparency: false } }], { matteCache: givenMatte(soft, W, H) })).data);
  let partial = 0;
  for (let y = 1; y < H - 1; y++)
    for (let x = 1; x < W - 1; x++) {
      const a = alphaAt(out, x, y);
      let zeros = 0;
      for (let j = -1; j <= 1; j++) for (let i = -1; i <= 1; i++) if (alphaAt(out, x + i, y + j) === 0) zeros++;
      if (a > 0 && a < 255) {
        partial++;
        assert.ok(zeros > 0, `a partial pixel at ${x},${y} away from the edge`);
        assert.ok(soft[y * W + x]! >= 128, 'inside the threshold');
      }
      if (a === 255) assert.is(zeros, 0, `opaque next to transparent at ${x},${y}`);
      if (a === 0) assert.ok(soft[y * W + x]! < 128);
    }
  assert.ok(partial > 100, `${partial} edge pixels`);
});

test('the foreground box follows the subject through later steps, within a pixel', async () => {
  const chains: Operation[][] = [
    [],
    [{ resize: { width: 400 } }],
    [{ rotate: 90 }, { flip: 'h' }],
    [{ place: { scale: 50, position: { x: 0, y: 0 }, aspectRatio: '1:1' } }],
    [{ shadow: { offsetX: -60, offsetY: 10, blur: 6 } }],
    [{ trim: true }],
    [{ resize: { width: 100, height: 100, fit: 'cover' } }],
    [{ size: { megapixels: 0.01 } }],
  ];
  for (const chain of chains) {
    const out = await edit(photo, [{ removeBackground: true }, ...chain], { matteCache: givenMatte(soft, W, H) });
    // The subject alone: the same chain with a shadow's alpha kept out (the box of the cut-out's own alpha).
    const subjectOnly = chain.filter((op) => !('shadow' in op));
    const reference = await decode((await edit(photo, [{ removeBackground: true }, ...subjectOnly], { matteCache: givenMatte(soft, W, H) })).data);
    const expected = alphaBox(reference)!;
    const box = out.foreground!;
    assert.ok(box, `no foreground for ${JSON.stringify(chain)}`);
    const shift = chain.some((op) => 'shadow' in op) ? { left: out.width - reference.width, top: out.height - reference.height } : { left: 0, top: 0 };
    // The box is the geometric one, its edges rounded outwards: an enlargement's kernel spreads a
    // few faint levels of alpha past it (lanczos3: about half its 3-pixel reach, scaled).
    const scale = Math.max(1, reference.width / W);
    const within = chain.some((op) => 'resize' in op) ? Math.ceil(1.5 * scale) : 1;
    for (const key of ['left', 'top', 'width', 'height'] as const) {
      const want = expected[key] + (key === 'left' ? shift.left : key === 'top' ? shift.top : 0);
      assert.ok(Math.abs(box[key] - want) <= (key === 'width' || key === 'height' ? 2 * within : within), `${JSON.stringify(chain)}: ${key} ${box[key]}, measured ${want}`);
    }
  }
  // Opaque over a background image, the box is still there; without removeBackground there is none.
  const staged = await edit(photo, [{ removeBackground: true }, { backgroundImage: true }], { matteCache: givenMatte(soft, W, H), backgroundImage: photo, format: 'auto' });
  assert.is(staged.format, 'jpeg');
  const plain = await edit(photo, [{ removeBackground: true }], { matteCache: givenMatte(soft, W, H) });
  assert.equal(staged.foreground, plain.foreground);
  assert.equal(plain.foreground, alphaBox(await decode(plain.data)));
  assert.is((await edit(photo, [{ flip: 'h' }])).foreground, undefined);
});

class MapCache implements MatteCache {
  readonly entries = new Map<string, Uint8Array>();
  readonly outcomes: MatteCacheOutcome[] = [];
  get = (key: string) => this.entries.get(key);
  put = (key: string, entry: Uint8Array) => void this.entries.set(key, entry);
  report = (outcome: MatteCacheOutcome) => void this.outcomes.push(outcome);
}

test('the matte cache keeps serving the matte when only the staging changes', async () => {
  const cache = new MapCache();
  await removeBackground(lenna, { matteCache: cache });
  for (let i = 0; i < 400 && !cache.outcomes.includes('stored'); i++) await sleep(10);
  assert.equal(cache.outcomes, ['miss', 'stored']);
  const stagings = [
    { roi: [0, 0, 100, 100] as [number, number, number, number] },
    { semitransparency: false },
    { shadow: true as const },
    { place: { scale: 80, aspectRatio: '1:1' } },
    { background: '#eee', format: 'auto' as const },
    { backgroundImage: photo, shadow: { type: 'contact' as const } },
    { trim: true, trimMargin: '10%' },
  ];
  for (const staging of stagings) {
    await removeBackground(lenna, { matteCache: cache, ...staging });
    assert.is(cache.outcomes.at(-1), 'hit', JSON.stringify(Object.keys(staging)));
  }
  assert.is(cache.entries.size, 1);
});

test('removeBackground() takes the staging: size first (a smaller decode), the region in the input\'s pixels, the result within the cap', async () => {
  const big = (await edit(lenna, [{ resize: { width: 1600 } }], { format: 'jpeg' })).data; // 1600x1600
  const out = await removeBackground(big, { size: 'preview', roi: [0, 0, 800, 1600], shadow: true, place: { aspectRatio: '4:3', scale: 90 }, backgroundImage: photo, format: 'auto' });
  assert.ok(out.width * out.height <= 250_000, `${out.width}x${out.height}`);
  assert.is(out.format, 'jpeg');
  assert.is(formatOf(out.data), 'jpeg');
  assert.ok(Math.abs(out.width / out.height - 4 / 3) < 0.01);
  // The region (the left half of the input) holds the whole subject's box.
  const cut = await removeBackground(big, { size: 'preview', roi: [0, 0, 800, 1600] });
  const box = alphaBox(await decode(cut.data))!;
  assert.ok(box.left + box.width <= cut.width / 2 + 1, `${JSON.stringify(box)} in ${cut.width}`);
  assert.ok(cut.foreground && cut.foreground.left === box.left && cut.foreground.width === box.width);
});

test('removeBackground()\'s staging errors name the option', async () => {
  const cases: Array<[Record<string, unknown>, string, string]> = [
    [{ roi: [0, 0, 999, 10] }, 'invalid_operations', 'roi'],
    [{ place: { scale: 150 } }, 'invalid_option', 'place.scale'],
    [{ size: 'tiny' }, 'invalid_option', 'size'],
    [{ shadow: true, channels: 'alpha' }, 'invalid_option', 'shadow'],
    [{ background: '#fff', backgroundImage: photo }, 'invalid_option', 'backgroundImage'],
    [{ backgroundImage: Buffer.from('not an image') }, 'unsupported_image', 'backgroundImage'],
  ];
  for (const [options, code, path] of cases) {
    try {
      await removeBackground(lenna, options);
      assert.unreachable(JSON.stringify(options));
    } catch (err) {
      assert.instance(err, MatteError);
      assert.is((err as MatteError).code, code, JSON.stringify(options));
      assert.is((err as MatteError).path, path, JSON.stringify(options));
    }
  }
});

test.run();
