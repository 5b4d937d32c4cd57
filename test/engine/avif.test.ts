// run-tests: parallel
// AVIF output (native/encode/avif.cc: libheif called directly, the job's threads, IntraBC off)
// against what libvips' own heifsave made of the same image before (test/helpers/libvips-avif.cc,
// built here with the system compiler against the system libvips), decoded by libvips (the addon)
// and by sharp (its own libheif and dav1d, in a child process).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { edit, MatteError, type Operation } from '../../lib/index.js';
import { convert, decode, formatOf, gradient, makeGif, makePng, type Decoded } from '../helpers/images.js';
import { buildLibvipsProgram } from '../helpers/libvips-program.js';
import { uninstrumentedEnv } from '../helpers/uninstrumented-env.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'matte-avif-'));
const referenceProgram = join(dir, 'libvips-avif');
const sharpDecode = fileURLToPath(new URL('../helpers/sharp-decode.js', import.meta.url));

// A soft-edged shape on a flat background, as bench P4 (background + trim): libaom 3.6 takes it for
// screen content, the case that was slow.
const shape = makePng(384, 320, (x, y) => {
  const d = Math.hypot(x - 190, y - 150) - 110;
  const t = Math.min(1, Math.max(0, (d + 3) / 6));
  return [Math.round(40 + 215 * t), Math.round(90 * (1 - t)), Math.round(200 * (1 - t))];
}, { alpha: false });

// Photo-like: smooth shading with texture and noise (a deterministic generator).
let seed = 11;
const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const photo = makePng(320, 240, (x, y) => {
  const n = random() * 24;
  return [Math.round(100 + 80 * Math.sin(x / 17) + n), Math.round(120 + 60 * Math.cos(y / 23) + n), Math.round(90 + (x * y) / 900 + n)];
}, { alpha: false });

// A cut-out with a soft alpha edge on transparency.
const cutout = makePng(200, 160, (x, y) => {
  const d = Math.hypot(x - 100, y - 80) - 60;
  return [30, 160, 90, Math.round(255 * Math.min(1, Math.max(0, (4 - d) / 8)))];
});

// Aliased glyphs repeated exactly (pixel art): the one kind of image where IntraBC paid.
const glyphs = (() => {
  const shapes = Array.from({ length: 16 }, () => Array.from({ length: 64 }, () => random() < 0.4));
  const cells: number[] = Array.from({ length: 32 * 24 }, () => Math.floor(random() * 16));
  return makePng(256, 192, (x, y) => {
    const cell = Math.floor(y / 8) * 32 + Math.floor(x / 8);
    return shapes[cells[cell]!]![(y % 8) * 8 + (x % 8)] && x % 160 < 136 ? [20, 90, 200] : [255, 255, 255];
  }, { alpha: false });
})();

// The reference program is not matte: it runs without test:asan's preloaded ASan runtime.
const plainEnv = uninstrumentedEnv();

test.before(async () => {
  await buildLibvipsProgram(referenceProgram, ['test/helpers/libvips-avif.cc'], 'vips-cpp');
});

test.after(() => rmSync(dir, { recursive: true, force: true }));

async function libvipsAvif(png: Buffer, name: string): Promise<Buffer> {
  const input = join(dir, `${name}.png`), output = join(dir, `${name}.avif`);
  writeFileSync(input, png);
  await run(referenceProgram, [input, output], { env: plainEnv, timeout: 120_000 });
  return readFileSync(output);
}

async function sharpDecoded(avif: Buffer, name: string): Promise<{ width: number; height: number; channels: number; data: Buffer }> {
  const input = join(dir, `${name}.matte.avif`), output = join(dir, `${name}.raw`);
  writeFileSync(input, avif);
  const { stdout } = await run(process.execPath, [sharpDecode, input, output]);
  return { ...JSON.parse(stdout), data: readFileSync(output) };
}

/** Mean absolute difference per channel (0..255) of two RGBA buffers, over `channels` channels. */
function meanDifference(a: Buffer, b: Buffer, channels = 4): number {
  assert.is(a.length, b.length);
  let sum = 0, count = 0;
  for (let i = 0; i < a.length; i += 4)
    for (let c = 0; c < channels; c++) {
      sum += Math.abs(a[i + c]! - b[i + c]!);
      count++;
    }
  return sum / count;
}

const source = async (png: Buffer): Promise<Decoded> => decode(png);

for (const [name, png, alpha] of [['shape', shape, false], ['photo', photo, false], ['cutout', cutout, true]] as const) {
  test(`${name}: the same AVIF as libvips' heifsave, decoded alike by libvips and sharp, alpha ${alpha ? 'kept' : 'absent'}`, async () => {
    // heifsave's own default quality, Q 50 (matte's AVIF quality is heifsave's Q; its default is 60).
    const ours = await convert(png, 'avif', { quality: 50 });
    const theirs = await libvipsAvif(png, name);
    assert.is(formatOf(ours), 'avif');
    // Same settings, same libheif and libaom: IntraBC was never chosen on these, and 2 or 4 threads
    // give the same bitstream, so the files are the same bytes.
    assert.ok(ours.equals(theirs), `${name}: ${ours.length} bytes against libvips' ${theirs.length}`);

    const original = await source(png);
    const decoded = await decode(ours);
    assert.equal([decoded.width, decoded.height], [original.width, original.height]);
    assert.is(decoded.hasAlpha, alpha);
    // Lossy at Q 50: close to the source (mean error per channel, 0..255).
    assert.ok(meanDifference(decoded.data, original.data) < 6, `${name}: mean error ${meanDifference(decoded.data, original.data)}`);

    const bySharp = await sharpDecoded(ours, name);
    assert.equal([bySharp.width, bySharp.height, bySharp.channels], [original.width, original.height, alpha ? 4 : 3]);
    // Two decoders of one file: only their YCbCr to RGB rounding may differ.
    const between = meanDifference(bySharp.data, decoded.data);
    assert.ok(between <= 1, `${name}: libvips and sharp decode differ by ${between}`);
  });
}

test('pixel art (aliased glyphs repeated exactly): the one case IntraBC served, within 15% of the size, same quality', async () => {
  const ours = await convert(glyphs, 'avif');
  const theirs = await libvipsAvif(glyphs, 'glyphs');
  const original = await source(glyphs);
  const errorOurs = meanDifference((await decode(ours)).data, original.data, 3);
  const errorTheirs = meanDifference((await decode(theirs)).data, original.data, 3);
  assert.ok(ours.length <= theirs.length * 1.15, `${ours.length} bytes against libvips' ${theirs.length}`);
  assert.ok(errorOurs <= errorTheirs + 0.5, `mean error ${errorOurs} against libvips' ${errorTheirs}`);
});

test('an edit to avif: background, trim (bench P4) gives the trimmed size without alpha', async () => {
  const onTransparent = makePng(300, 200, (x, y) => (Math.hypot(x - 150, y - 100) < 60 ? [0, 0, 255, 255] : [0, 0, 0, 0]));
  const operations: Operation[] = [{ background: '#ff0000' }, { trim: true }];
  const out = await edit(onTransparent, operations, { format: 'avif' });
  const png = await edit(onTransparent, operations, { format: 'png' });
  const decoded = await decode(out.data);
  assert.ok(png.width < 130 && png.height < 130, `trimmed to ${png.width}x${png.height}`);
  assert.equal([out.width, out.height, decoded.width, decoded.height], [png.width, png.height, png.width, png.height]);
  assert.is(decoded.hasAlpha, false);
});

test('an animation to avif gives its first frame, as before', async () => {
  const gif = makeGif(40, 20, [[250, 10, 10], [10, 250, 10], [10, 10, 250]]);
  const out = await edit(gif, [{ flip: 'h' }], { format: 'avif' });
  assert.equal([out.width, out.height, out.frames], [40, 20, 1]);
  const decoded = await decode(out.data);
  const [r, g, b] = [decoded.data[0]!, decoded.data[1]!, decoded.data[2]!];
  assert.ok(r > 200 && g < 60 && b < 60, `first frame is red: ${r},${g},${b}`);
});

test('the budget stops an avif job while its pixels are computed (docs/api.md: the AV1 encode after that cannot be stopped)', async () => {
  const operations: Operation[] = [{ resize: { width: 10000, height: 10000, fit: 'cover' } }, { blur: 250 }];
  const started = performance.now();
  try {
    await edit(gradient(512, 512), operations, { format: 'avif', timeout: 1 });
    assert.unreachable('the job should have been stopped');
  } catch (err) {
    assert.instance(err, MatteError);
    assert.is((err as MatteError).code, 'job_timeout');
  }
  // The plan runs for minutes; stopped means well within that.
  assert.ok(performance.now() - started < 10_000);
  // The next job works.
  const after = await edit(photo, [{ flip: 'h' }], { format: 'avif' });
  assert.is(formatOf(after.data), 'avif');
});

test.run();
