// run-tests: parallel
// Responsive images through the real addon (docs/api.md, "Extensions: responsive images"): the
// window a gravity keeps, the subject's window from a model's matte (a tiny channel-mean model:
// what is bright is the subject) and its matte cache, pad's box, fill, dpr, sharpen, gamma, extend
// and crop, each asserted on the result's pixels.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { edit, loadModel, type MatteCache, type MatteCacheOutcome, type Operation } from '../../lib/index.js';
import { brightnessModel } from '../helpers/onnx.js';
import { convert, decode, gifFrames, gradient, makeGif, makePng, pixel, solid, type Decoded, type Rgba } from '../helpers/images.js';
import { decodeGifFrames } from '../helpers/gif-frames.js';
import { fixture } from '../helpers/fixtures.js';
import { scratchDir } from '../helpers/scratch.js';
import { failure } from '../helpers/failure.js';

let dir = '';
scratchDir(test, 'matte-responsive-', (path) => (dir = path));

const WHITE: [number, number, number] = [255, 255, 255];
const BLACK: [number, number, number] = [0, 0, 0];

async function run(input: Buffer, operations: Operation[], options: Parameters<typeof edit>[2] = {}): Promise<Decoded> {
  return decode((await edit(input, operations, { format: 'png', ...options })).data);
}

/** The centre of the dark pixels (R < 128) of a light image, in its pixels. */
function darkCentre(image: Decoded): { x: number; y: number; count: number } {
  let x = 0, y = 0, count = 0;
  for (let j = 0; j < image.height; j++)
    for (let i = 0; i < image.width; i++)
      if (pixel(image, i, j)[0] < 128) (x += i + 0.5), (y += j + 0.5), count++;
  return { x: x / count, y: y / count, count };
}

/** White with a black square of `side` pixels centred on (cx, cy). */
const dot = (width: number, height: number, cx: number, cy: number, side = 8) =>
  makePng(width, height, (x, y) => (Math.abs(x + 0.5 - cx) < side / 2 && Math.abs(y + 0.5 - cy) < side / 2 ? BLACK : WHITE), { alpha: false });

test('a focal point is the window\'s centre, within a pixel, moved only as far as the image\'s edge needs', async () => {
  // 800x400 to a 200x200 cover: scaled to 400x200, the window's centre on the point.
  const landscape = dot(800, 400, 560, 200);
  let out = await run(landscape, [{ resize: { width: 200, height: 200, fit: 'cover', gravity: { x: 0.7, y: 0.5 } } }]);
  assert.is(out.width, 200);
  let c = darkCentre(out);
  assert.ok(Math.abs(c.x - 100) <= 1 && Math.abs(c.y - 100) <= 1, `the point at the centre: ${JSON.stringify(c)}`);
  // 0.95 of 400 is 380: the window stops at the right edge (left 200), the point at 180.
  out = await run(dot(800, 400, 760, 200), [{ resize: { width: 200, height: 200, fit: 'cover', gravity: { x: 0.95, y: 0.5 } } }]);
  c = darkCentre(out);
  assert.ok(Math.abs(c.x - 180) <= 1, `clamped at the edge: ${JSON.stringify(c)}`);
  // On the other axis, with crop (never enlarges): a 300x900 portrait to 300x300, scale 1.
  out = await run(dot(300, 900, 150, 270), [{ resize: { width: 300, height: 300, fit: 'crop', gravity: { x: 0.5, y: 0.3 } } }]);
  assert.is(out.height, 300);
  c = darkCentre(out);
  assert.ok(Math.abs(c.y - 150) <= 1 && Math.abs(c.x - 150) <= 1, `crop's window on the point: ${JSON.stringify(c)}`);
});

test('compass points keep that edge or corner; the centre is unchanged', async () => {
  const image = gradient(400, 200); // red = x * 255 / 399
  const red = async (gravity: string, fit: 'cover' | 'crop' = 'cover') => pixel(await run(image, [{ resize: { width: 100, height: 100, fit, gravity } as never }]), 0, 50)[0];
  assert.ok((await red('west')) <= 2);
  assert.ok((await red('northwest')) <= 2);
  assert.ok(Math.abs((await red('east')) - 128) <= 2, 'the right half: red from 128');
  assert.ok(Math.abs((await red('centre')) - 64) <= 2);
  assert.is(await red('center'), await red('centre'));
  const plain = await edit(image, [{ resize: { width: 100, height: 100, fit: 'cover' } }], { format: 'png' });
  const centre = await edit(image, [{ resize: { width: 100, height: 100, fit: 'cover', gravity: 'centre' } }], { format: 'png' });
  assert.ok(plain.data.equals(centre.data), 'gravity centre is the cover of before');
  // A portrait, north and south.
  const tall = makePng(100, 300, (x, y) => [0, Math.round((y * 255) / 299), 0], { alpha: false });
  const top = await run(tall, [{ resize: { width: 100, height: 100, fit: 'crop', gravity: 'north' } }]);
  const bottom = await run(tall, [{ resize: { width: 100, height: 100, fit: 'crop', gravity: 'southeast' } }]);
  assert.ok(pixel(top, 50, 0)[1] <= 2 && pixel(bottom, 50, 99)[1] >= 253);
});

// ---- subject -----------------------------------------------------------------------------------

/** The channel-mean model loaded under `name`: the matte is the pixel's brightness. */
async function meanModel(name: string): Promise<void> {
  const { path, ...entry } = await brightnessModel(dir, name, 32);
  await loadModel(name, { entry, path });
}

/** Black with a white disc of radius r at (cx, cy). */
const subjectAt = (width: number, height: number, cx: number, cy: number, r: number) =>
  makePng(width, height, (x, y) => ((x + 0.5 - cx) ** 2 + (y + 0.5 - cy) ** 2 <= r * r ? WHITE : BLACK), { alpha: false });

const whiteCount = (image: Decoded) => {
  let n = 0;
  for (let y = 0; y < image.height; y++) for (let x = 0; x < image.width; x++) if (pixel(image, x, y)[0] >= 128) n++;
  return n;
};

/** A Map as a matte cache, counting what the library reports. */
function mapCache(): MatteCache & { outcomes: MatteCacheOutcome[]; entries: Map<string, Uint8Array> } {
  const entries = new Map<string, Uint8Array>();
  const outcomes: MatteCacheOutcome[] = [];
  return { entries, outcomes, get: (k) => entries.get(k), put: (k, v) => void entries.set(k, v), report: (o) => outcomes.push(o) };
}

const waitFor = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
};

test('subject keeps an off-centre subject whole where the centre cuts it', async () => {
  await meanModel('mean-subject');
  // A disc of radius 40 centred at x = 330 of 400: the centre's window [100, 300) cuts it.
  const photo = subjectAt(400, 200, 330, 100, 40);
  const area = Math.PI * 40 * 40;
  // A job without removeBackground runs the default model: the last loaded, this mean model.
  const centre = await run(photo, [{ resize: { width: 200, height: 200, fit: 'cover' } }]);
  const subject = await run(photo, [{ resize: { width: 200, height: 200, fit: 'cover', gravity: 'subject' } }]);
  assert.ok(whiteCount(centre) < 0.5 * area, `the centre cuts it: ${whiteCount(centre)}`);
  assert.ok(whiteCount(subject) >= 0.98 * area, `subject keeps it whole: ${whiteCount(subject)} of ${area}`);
  assert.ok(Math.abs(darkCentreOfWhite(subject) - 130) <= 2, 'the window centred on it as far as the edge allows (left 200)');
  // After removeBackground, the cut-out's alpha is the subject: the same window, no second matte.
  const cutOut = await run(photo, [{ removeBackground: { model: 'mean-subject', refine: false } }, { resize: { width: 200, height: 200, fit: 'cover', gravity: 'subject' } }]);
  let opaque = 0;
  for (let y = 0; y < 200; y++) for (let x = 0; x < 200; x++) if (pixel(cutOut, x, y)[3] >= 128) opaque++;
  assert.ok(opaque >= 0.98 * area, `the cut-out's subject whole: ${opaque}`);
});

/** The mean x of the white pixels. */
function darkCentreOfWhite(image: Decoded): number {
  let x = 0, n = 0;
  for (let j = 0; j < image.height; j++) for (let i = 0; i < image.width; i++) if (pixel(image, i, j)[0] >= 128) (x += i + 0.5), n++;
  return x / n;
}

test('subject: a photo with no subject keeps the centre', async () => {
  await meanModel('mean-none');
  // Black with two tiny grey marks, far below any subject: the centre's window, as without gravity.
  const photo = makePng(400, 200, (x, y) => ((x === 10 || x === 300) && y === 100 ? [60, 60, 60] : BLACK), { alpha: false });
  const subject = await edit(photo, [{ resize: { width: 200, height: 200, fit: 'cover', gravity: 'subject' } }], { format: 'png' });
  const centre = await edit(photo, [{ resize: { width: 200, height: 200, fit: 'cover' } }], { format: 'png' });
  assert.ok(subject.data.equals(centre.data));
});

test('subject: one inference a photo; every later crop, at any size, takes the cached matte', async () => {
  await meanModel('mean-cached');
  const photo = subjectAt(400, 200, 70, 100, 40);
  const cache = mapCache();
  const crop = (width: number, height: number) => edit(photo, [{ resize: { width, height, fit: 'cover', gravity: 'subject' } }], { format: 'png', matteCache: cache });
  const first = await crop(200, 200);
  await waitFor(() => cache.outcomes.includes('stored'));
  assert.equal(cache.outcomes, ['miss', 'stored']);
  assert.is(cache.entries.size, 1);
  const second = await crop(100, 100);
  const third = await crop(200, 200);
  assert.equal(cache.outcomes, ['miss', 'stored', 'hit', 'hit']);
  assert.ok(third.data.equals(first.data), 'the cached matte gives the same window');
  assert.ok(whiteCount(await decode(second.data)) >= 0.98 * Math.PI * 20 * 20);
  // A removeBackground of the same photo is another matte (its own key).
  await edit(photo, [{ removeBackground: { model: 'mean-cached', refine: false } }], { format: 'png', matteCache: cache });
  await waitFor(() => cache.entries.size === 2);
  assert.is(cache.entries.size, 2);
});

test('attention chooses a window without a model, and keeps a busy corner over a flat image', async () => {
  // A flat grey image with a saturated, detailed patch on the right: libvips' attention goes there.
  const photo = makePng(400, 200, (x, y) => (x > 300 && x < 380 ? ((x >> 2) + (y >> 2)) % 2 ? [255, 40, 20] : [20, 200, 40] : [128, 128, 128]), { alpha: false });
  const out = await run(photo, [{ resize: { width: 200, height: 200, fit: 'cover', gravity: 'attention' } }]);
  assert.is(out.width, 200);
  assert.ok(pixel(out, 150, 100)[1] !== 128 || pixel(out, 151, 100)[1] !== 128, 'the busy patch is in the window');
});

test('attention on an animation: every frame cut by the first frame\'s window', async () => {
  // The busy patch on the right of every frame; the frames differ in their flat grey.
  const greys: Array<[number, number, number]> = [[100, 100, 100], [140, 140, 140], [180, 180, 180]];
  const gif = makeGif(400, 200, greys, { frameFn: (i) => (x, y) => (x > 300 && x < 380 ? ((x >> 2) + (y >> 2)) % 2 ? [255, 40, 20] : [20, 200, 40] : greys[i]!) });
  const out = await edit(gif, [{ resize: { width: 200, height: 200, fit: 'cover', gravity: 'attention' } }], { format: 'gif' });
  assert.equal([out.width, out.height, gifFrames(out.data)], [200, 200, 3]);
  for (const [i, frame] of decodeGifFrames(out.data).frames.entries()) {
    const at = (x: number, y: number) => pixel(frame, x, y);
    assert.ok(Math.abs(at(10, 100)[0]! - greys[i]![0]) < 12, `frame ${i}: its own grey on the left`);
    assert.ok([150, 151, 152, 153].some((x) => at(x, 100)[0]! > 200 || at(x, 100)[1]! > 150), `frame ${i}: the busy patch is in the window`);
  }
});

// ---- pad, fill, enlarge, dpr --------------------------------------------------------------------

test('pad: the exact box, its colour, and the image placed by the gravity', async () => {
  const red = solid(400, 200, [255, 0, 0], { alpha: false });
  const row = (image: Decoded, y: number) => pixel(image, 50, y);
  let out = await run(red, [{ resize: { width: 100, height: 100, fit: 'pad', background: 'blue' } }]);
  assert.equal([out.width, out.height, out.hasAlpha], [100, 100, false]);
  assert.equal(row(out, 24), [0, 0, 255, 255]);
  assert.equal(row(out, 25), [255, 0, 0, 255]);
  assert.equal(row(out, 74), [255, 0, 0, 255]);
  assert.equal(row(out, 75), [0, 0, 255, 255]);
  out = await run(red, [{ resize: { width: 100, height: 100, fit: 'pad', gravity: 'north', background: '#00ff00' } }]);
  assert.equal([row(out, 49), row(out, 50)], [[255, 0, 0, 255], [0, 255, 0, 255]]);
  out = await run(red, [{ resize: { width: 100, height: 100, fit: 'pad', gravity: { x: 0, y: 1 } } }]);
  assert.ok(out.hasAlpha, 'transparent by default: an alpha band');
  assert.equal([row(out, 49), row(out, 50), row(out, 99)], [[0, 0, 0, 0], [255, 0, 0, 255], [255, 0, 0, 255]]);
  // A format without alpha flattens the transparent box on white, as any other.
  const jpeg = await decode((await edit(red, [{ resize: { width: 100, height: 100, fit: 'pad' } }], { format: 'jpeg' })).data);
  assert.ok(pixel(jpeg, 50, 5).every((v, i) => (i < 3 ? v > 245 : true)));
  // enlarge false: a small image stays its size in the middle of the box.
  out = await run(solid(40, 20, [255, 0, 0], { alpha: false }), [{ resize: { width: 100, height: 100, fit: 'pad', enlarge: false, background: 'white' } }]);
  assert.equal([out.width, out.height], [100, 100]);
  assert.equal([pixel(out, 29, 50), pixel(out, 30, 50), pixel(out, 69, 50), pixel(out, 70, 50), pixel(out, 50, 39), pixel(out, 50, 40)], [
    [255, 255, 255, 255], [255, 0, 0, 255], [255, 0, 0, 255], [255, 255, 255, 255], [255, 255, 255, 255], [255, 0, 0, 255],
  ]);
});

test("pad's transparent box in a JPEG: the same bytes as a white box, and transparent again where a step follows", async () => {
  const photo = await convert(gradient(300, 200), 'jpeg', { quality: 90 });
  const pad = (background?: string) => ({ resize: { width: 160, height: 160, fit: 'pad', ...(background ? { background } : {}) } });
  const transparent = await edit(photo, [pad()], { format: 'jpeg' });
  const white = await edit(photo, [pad('#ffffff')], { format: 'jpeg' });
  assert.ok(transparent.data.equals(white.data), 'the encoder flattens the box onto white either way');
  // Not the last step: the box stays transparent for what follows (here, a background that fills it).
  const filled = await decode((await edit(photo, [pad(), { background: '#ff0000' }], { format: 'jpeg' })).data);
  const corner = pixel(filled, 80, 3);
  assert.ok(corner[0] > 240 && corner[1] < 15 && corner[2] < 15, `the box filled by the background step: ${corner}`);
  // PNG keeps the transparency.
  const png = await decode((await edit(photo, [pad()], { format: 'png' })).data);
  assert.equal(pixel(png, 80, 3)[3], 0);
});

test('fill: exactly the size asked, the aspect ignored', async () => {
  const out = await run(gradient(400, 200), [{ resize: { width: 123, height: 45, fit: 'fill' } }]);
  assert.equal([out.width, out.height], [123, 45]);
  assert.ok(pixel(out, 0, 22)[0] <= 3 && pixel(out, 122, 22)[0] >= 252 && pixel(out, 60, 0)[1] <= 4 && pixel(out, 60, 44)[1] >= 251);
  const small = await run(gradient(40, 20), [{ resize: { width: 123, height: 10, fit: 'fill', enlarge: false } }]);
  assert.equal([small.width, small.height], [40, 10], 'enlarge false: each side at most the source\'s');
});

test('enlarge: false keeps contain and cover within the source; true lets crop and scale-down enlarge', async () => {
  const image = gradient(100, 50);
  const size = async (resize: object) => {
    const r = await edit(image, [{ resize } as Operation], { format: 'png' });
    return [r.width, r.height];
  };
  assert.equal(await size({ width: 300 }), [300, 150]);
  assert.equal(await size({ width: 300, enlarge: false }), [100, 50]);
  assert.equal(await size({ width: 300, height: 300, fit: 'cover', enlarge: false }), [100, 50], 'as crop');
  assert.equal(await size({ width: 300, height: 300, fit: 'crop', enlarge: true }), [300, 300], 'as cover');
  assert.equal(await size({ width: 300, fit: 'scale-down', enlarge: true }), [300, 150], 'as contain');
});

test('dpr multiplies the size asked, capped by the source unless enlarge', async () => {
  const image = gradient(1000, 800);
  const size = async (resize: object) => {
    const r = await edit(image, [{ resize } as Operation], { format: 'png' });
    return [r.width, r.height];
  };
  assert.equal(await size({ width: 300, dpr: 2 }), [600, 480]);
  assert.equal(await size({ width: 300, dpr: 1.5 }), [450, 360]);
  assert.equal(await size({ width: 300, dpr: 4 }), [1200, 960], 'contain enlarges by default');
  assert.equal(await size({ width: 300, dpr: 4, enlarge: false }), [1000, 800], 'capped at the source');
  assert.equal(await size({ width: 200, height: 200, fit: 'cover', dpr: 3 }), [600, 600]);
  assert.equal(await size({ width: 400, height: 400, fit: 'crop', dpr: 3 }), [800, 800], 'the box keeps its aspect, capped where the source ends');
  assert.equal(await size({ width: 300, height: 300, fit: 'pad', dpr: 2 }), [600, 600]);
  assert.equal(await size({ width: 300, height: 100, fit: 'fill', dpr: 2.5 }), [750, 250]);
  const { error } = await failure(edit(image, [{ resize: { width: 3000, dpr: 4 } }]));
  assert.equal([error.code, error.path], ['invalid_operations', 'operations[0].resize'], 'past 10000 pixels a side');
});

test('keepBoxAspect: a box larger than the image is shrunk into it keeping its aspect, then covered', async () => {
  const size = async (image: Buffer, resize: object) => {
    const r = await edit(image, [{ resize } as Operation], { format: 'png' });
    return [r.width, r.height];
  };
  const square = gradient(600, 600);
  assert.equal(await size(square, { width: 1200, height: 800, fit: 'crop', keepBoxAspect: true }), [600, 400], 'k = 0.5');
  assert.equal(await size(square, { width: 1200, height: 800, fit: 'cover', enlarge: false, keepBoxAspect: true }), [600, 400], 'cover without enlarging');
  assert.equal(await size(square, { width: 1200, height: 800, fit: 'crop' }), [600, 600], 'without it: min(w, W) x min(h, H)');
  const wide = gradient(1000, 600);
  assert.equal(await size(wide, { width: 800, height: 800, fit: 'crop', keepBoxAspect: true }), [600, 600], 'larger on one side only: k = 0.75');
  assert.equal(await size(wide, { width: 700, height: 1000, fit: 'crop', keepBoxAspect: true }), [420, 600], 'each side rounded');
  // dpr is capped where the source ends, keeping the box's aspect: 300x200 x 4 is 600x400, inside already.
  assert.equal(await size(square, { width: 300, height: 200, fit: 'crop', dpr: 4, keepBoxAspect: true }), [600, 400], 'the box after dpr');
  // An image larger than the box: exactly plain cover, pixel for pixel.
  const large = gradient(2000, 1600);
  for (const fit of ['crop', 'cover'] as const) {
    const box = { width: 400, height: 300, fit, enlarge: false };
    const plain = await run(large, [{ resize: box }]);
    const kept = await run(large, [{ resize: { ...box, keepBoxAspect: true } }]);
    assert.equal([kept.width, kept.height], [400, 300]);
    assert.ok(kept.data.equals(plain.data), `${fit}: the same pixels as without keepBoxAspect`);
  }
  // fill: the image scaled to the shrunk box, each side on its own (600x600 into 600x400).
  const filled = await run(square, [{ resize: { width: 1200, height: 800, fit: 'fill', enlarge: false, keepBoxAspect: true } }]);
  assert.equal([filled.width, filled.height], [600, 400]);
  assert.ok(pixel(filled, 300, 0)[1] <= 3 && pixel(filled, 300, 399)[1] >= 252, 'the whole height squeezed in');
});

test('keepBoxAspect: gravity places the shrunk window', async () => {
  // 600x600 into 1200x800: the window is 600x400 of the image as it is, placed vertically.
  const image = dot(600, 600, 300, 360);
  let out = await run(image, [{ resize: { width: 1200, height: 800, fit: 'crop', keepBoxAspect: true, gravity: { x: 0.5, y: 0.6 } } }]);
  assert.equal([out.width, out.height], [600, 400]);
  let c = darkCentre(out);
  assert.ok(Math.abs(c.x - 300) <= 1 && Math.abs(c.y - 200) <= 1, `the focal point at the window's centre: ${JSON.stringify(c)}`);
  out = await run(image, [{ resize: { width: 1200, height: 800, fit: 'crop', keepBoxAspect: true, gravity: 'north' } }]);
  c = darkCentre(out);
  assert.ok(Math.abs(c.y - 360) <= 1, `north keeps the top: ${JSON.stringify(c)}`);
  out = await run(image, [{ resize: { width: 1200, height: 800, fit: 'crop', keepBoxAspect: true } }]);
  c = darkCentre(out);
  assert.ok(Math.abs(c.y - 260) <= 1, `the centre by default: ${JSON.stringify(c)}`);
});

test('keepBoxAspect is refused at its path where it cannot apply', async () => {
  const image = gradient(100, 50);
  const refused = async (resize: object, pattern: RegExp) => {
    const { error } = await failure(edit(image, [{ resize } as Operation]));
    assert.equal([error.code, error.path], ['invalid_operations', 'operations[0].resize.keepBoxAspect'], JSON.stringify(resize));
    assert.match(error.message, pattern);
  };
  await refused({ width: 300, height: 300, fit: 'contain', enlarge: false, keepBoxAspect: true }, /cover, crop, fill/);
  await refused({ width: 300, height: 300, keepBoxAspect: true }, /not contain/);
  await refused({ width: 300, height: 300, fit: 'pad', enlarge: false, keepBoxAspect: true }, /not pad/);
  await refused({ width: 300, height: 300, fit: 'scale-down', keepBoxAspect: true }, /not scale-down/);
  await refused({ width: 300, fit: 'crop', keepBoxAspect: true }, /both width and height/);
  await refused({ width: 300, height: 300, fit: 'cover', keepBoxAspect: true }, /enlarge: false \(cover enlarges by default\)/);
  await refused({ width: 300, height: 300, fit: 'fill', keepBoxAspect: true }, /enlarge: false/);
  await refused({ width: 300, height: 300, fit: 'crop', enlarge: true, keepBoxAspect: true }, /without enlarging/);
  const { error } = await failure(edit(image, [{ resize: { width: 300, height: 300, fit: 'crop', keepBoxAspect: 'yes' } } as never]));
  assert.equal([error.path, error.message], ['operations[0].resize.keepBoxAspect', 'operations[0].resize.keepBoxAspect must be true or false']);
  // false is the default, accepted with any fit.
  assert.is((await edit(image, [{ resize: { width: 30, keepBoxAspect: false } }], { format: 'png' })).width, 30);
});

// ---- sharpen, gamma, extend, crop -------------------------------------------------------------

/** The mean squared difference between horizontal and vertical neighbours of the red band. */
function edgeEnergy(image: Decoded): number {
  let sum = 0, n = 0;
  for (let y = 0; y + 1 < image.height; y++)
    for (let x = 0; x + 1 < image.width; x++) {
      const v = pixel(image, x, y)[0];
      sum += (pixel(image, x + 1, y)[0] - v) ** 2 + (pixel(image, x, y + 1)[0] - v) ** 2;
      n++;
    }
  return sum / n;
}

test('sharpen raises the edge energy of a reduced photo; 0 changes nothing', async () => {
  const photo = await readFile(await fixture('lenna.png'));
  const reduced = await edit(photo, [{ resize: { width: 128 } }], { format: 'png' });
  const plain = edgeEnergy(await decode(reduced.data));
  const one = edgeEnergy(await run(photo, [{ resize: { width: 128 } }, { sharpen: 1 }]));
  const strong = edgeEnergy(await run(photo, [{ resize: { width: 128 } }, { sharpen: { sigma: 1, flat: 2, jagged: 4 } }]));
  assert.ok(one > plain * 1.05, `sharpen 1: ${one} against ${plain}`);
  assert.ok(strong > one, `more flat and jagged amount: ${strong} against ${one}`);
  const zero = await edit(photo, [{ resize: { width: 128 } }, { sharpen: 0 }], { format: 'png' });
  assert.ok(zero.data.equals(reduced.data));
  // Alpha is left as it is.
  const alpha = await run(makePng(64, 64, (x) => [x * 4, 0, 0, 100]), [{ sharpen: 2 }]);
  assert.is(pixel(alpha, 30, 30)[3], 100);
});

test('gamma: out = 255 (in / 255)^(1 / gamma) at three levels, alpha kept', async () => {
  const levels = [64, 128, 192];
  const image = makePng(3, 1, (x) => [levels[x]!, levels[x]!, levels[x]!, 200]);
  for (const g of [2.2, 0.5]) {
    const out = await run(image, [{ gamma: g }]);
    levels.forEach((level, x) => {
      const want = Math.round(255 * (level / 255) ** (1 / g));
      const got = pixel(out, x, 0);
      assert.ok(Math.abs(got[0] - want) <= 1 && got[1] === got[0] && got[3] === 200, `gamma ${g} at ${level}: ${got} against ${want}`);
    });
  }
});

test('extend: the sides in pixels, in their colour (transparent by default)', async () => {
  const red = solid(20, 10, [255, 0, 0], { alpha: false });
  let out = await run(red, [{ extend: { top: 1, right: 2, bottom: 3, left: 4, background: 'white' } }]);
  assert.equal([out.width, out.height, out.hasAlpha], [26, 14, false]);
  const white: Rgba = [255, 255, 255, 255];
  const r: Rgba = [255, 0, 0, 255];
  assert.equal([pixel(out, 3, 5), pixel(out, 4, 5), pixel(out, 23, 5), pixel(out, 24, 5), pixel(out, 10, 0), pixel(out, 10, 1), pixel(out, 10, 10), pixel(out, 10, 11)], [white, r, r, white, white, r, r, white]);
  out = await run(red, [{ extend: { left: 5 } }]);
  assert.equal([out.width, out.height], [25, 10]);
  assert.equal([pixel(out, 4, 5), pixel(out, 5, 5)], [[0, 0, 0, 0], r]);
});

test('crop: the pixels a side cut off; nothing left is refused before any pixel', async () => {
  const out = await run(gradient(100, 50), [{ crop: { top: 5, right: 10, bottom: 15, left: 20 } }]);
  assert.equal([out.width, out.height], [70, 30]);
  assert.ok(Math.abs(pixel(out, 0, 0)[0] - Math.round((20 * 255) / 99)) <= 1 && Math.abs(pixel(out, 0, 0)[1] - Math.round((5 * 255) / 49)) <= 1);
  const { error } = await failure(edit(gradient(100, 50), [{ crop: { left: 60, right: 40 } }]));
  assert.equal([error.code, error.path], ['invalid_operations', 'operations[0].crop']);
  assert.match(error.message, /cuts 60\+40 x 0\+0 pixels off a 100x50 image: nothing is left/);
  // Known only once pixels are read (after trim): refused as the step runs.
  assert.is((await failure(edit(gradient(100, 50), [{ trim: true }, { crop: { top: 50 } }]))).error.path, 'operations[1].crop');
});

test('the qualities by format: jpeg and webp 80, avif 60 (a given quality used by all three)', async () => {
  const photo = await readFile(await fixture('lenna.png'));
  for (const [format, quality] of [['jpeg', 80], ['webp', 80], ['avif', 60]] as const) {
    const byDefault = await edit(photo, [{ resize: { width: 128 } }], { format });
    const given = await edit(photo, [{ resize: { width: 128 } }], { format, quality });
    assert.ok(byDefault.data.equals(given.data), `${format}'s default is ${quality}`);
  }
  const low = await edit(photo, [{ resize: { width: 128 } }], { format: 'avif', quality: 20 });
  const high = await edit(photo, [{ resize: { width: 128 } }], { format: 'avif', quality: 90 });
  assert.ok(low.data.length < high.data.length, 'AVIF takes the quality');
});

test.run();
