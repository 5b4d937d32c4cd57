// run-tests: parallel
// matte's PNG encoder (native/encode/png.cc: row stripes deflated on every core): the files decode
// to exactly the pixels given, with pngjs, with sharp (its own libvips and libspng, in a child
// process) and with libvips (matte's own load), for every layout (G, GA, RGB, RGBA), at sizes from
// 1x1 to 12 MP, with one stripe, many, and stripes smaller than deflate's window; they stay within
// 5% of the size of libvips' pngsave at the same level, with the same chunks; the pipeline writes
// its PNGs with it; a job stopped by its budget while it deflates fails as any stopped job.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { probes } from '../helpers/probes.js'; // first: lib/ then loads the probes build (encodePng)
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PNG } from 'pngjs';
import { edit } from '../../lib/index.js';
import { convert, makePng } from '../helpers/images.js';
import { failure } from '../helpers/failure.js';
import { uninstrumentedEnv } from '../helpers/uninstrumented-env.js';

const run = promisify(execFile);
const SHARP_CHILD = fileURLToPath(new URL('./png-sharp-child.js', import.meta.url));
const STRIPE_BYTES = 512 * 1024; // native/encode/png.cc's kStripeBytes
const LAYOUTS = { 1: 'G', 2: 'GA', 3: 'RGB', 4: 'RGBA' } as const;

/** Deterministic pixels that deflate neither trivially nor not at all: smooth bands, runs and noise. */
function pixels(width: number, height: number, bands: number, seed: number): Buffer {
  const out = Buffer.alloc(width * height * bands);
  let state = seed >>> 0 || 1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * bands;
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      const noisy = ((x >> 4) + (y >> 3)) % 3 === 0;
      for (let b = 0; b < bands; b++) out[i + b] = noisy ? (state >>> (8 * b)) & 255 : (x * (b + 1) + y * 3) & 255;
    }
  }
  return out;
}

/** The RGBA pngjs gives for raw pixels of `bands` bands. */
function asRgba(raw: Buffer, bands: number): Buffer {
  const n = raw.length / bands;
  const out = Buffer.alloc(n * 4);
  for (let i = 0; i < n; i++) {
    const p = raw.subarray(i * bands, i * bands + bands);
    const rgba = bands === 1 ? [p[0], p[0], p[0], 255] : bands === 2 ? [p[0], p[0], p[0], p[1]] : bands === 3 ? [p[0], p[1], p[2], 255] : [...p];
    for (let k = 0; k < 4; k++) out[i * 4 + k] = rgba[k]!;
  }
  return out;
}

/** RGBA without its alpha. */
function rgb(rgba: Buffer): Buffer {
  const out = Buffer.alloc((rgba.length / 4) * 3);
  for (let i = 0, j = 0; i < rgba.length; i += 4, j += 3) rgba.copy(out, j, i, i + 3);
  return out;
}

interface Chunk {
  type: string;
  data: Buffer;
}

function chunks(png: Buffer): Chunk[] {
  const out: Chunk[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    out.push({ type: png.toString('latin1', at + 4, at + 8), data: png.subarray(at + 8, at + 8 + length) });
    at += 12 + length;
  }
  return out;
}

/** The chunk types in order, runs of IDAT shown once. */
const layout = (png: Buffer) => chunks(png).map((c) => c.type).filter((t, i, all) => t !== 'IDAT' || all[i - 1] !== 'IDAT');

function firstDifference(a: Buffer, b: Buffer): string {
  if (a.length !== b.length) return `lengths ${a.length} and ${b.length}`;
  const i = a.findIndex((v, k) => v !== b[k]);
  return i < 0 ? 'none' : `byte ${i}: ${a[i]} vs ${b[i]}`;
}

interface Case {
  label: string;
  width: number;
  height: number;
  bands: number;
  raw: Buffer;
  png: Buffer;
  reference?: Buffer; // libvips' pngsave of the same pixels
}

const SIZES: Array<[number, number]> = [
  [1, 1],
  [1, 300],
  [300, 1],
  [64, 48], // under one stripe
  [700, 500], // RGB: 1 MB of rows, 3 stripes
];
// The default stripes; many stripes smaller than deflate's 32 KiB window, on more threads than
// cores; one thread (deflated on the sink's thread).
const VARIANTS: Array<Parameters<typeof probes.encodePng>[4]> = [
  {},
  { threads: 3, stripeBytes: 4096 },
  { threads: 1, stripeBytes: 65536 },
];

const cases: Case[] = [];
for (const [width, height] of SIZES) {
  for (const bands of [1, 2, 3, 4]) {
    const raw = pixels(width, height, bands, width * 7919 + height * 31 + bands);
    VARIANTS.forEach((options, v) => {
      cases.push({
        label: `${LAYOUTS[bands as 1]} ${width}x${height} ${JSON.stringify(options)}`,
        width,
        height,
        bands,
        raw,
        png: probes.encodePng(raw, width, height, bands, options),
        reference: v === 0 ? probes.encodePng(raw, width, height, bands, { libvips: true }) : undefined,
      });
    });
  }
}

let scratch = '';
test.before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'matte-png-'));
});
test.after(() => rm(scratch, { recursive: true, force: true }));

/** Decodes each PNG with sharp in a child process; returns its raw pixels and channel count. */
async function sharpDecode(pngs: Buffer[]): Promise<Array<{ width: number; height: number; channels: number; data: Buffer }>> {
  const files = await Promise.all(
    pngs.map(async (png, i) => {
      const file = join(scratch, `${i}-${Math.random().toString(36).slice(2)}.png`);
      await writeFile(file, png);
      return file;
    }),
  );
  const { stdout } = await run(process.execPath, [SHARP_CHILD, ...files], { timeout: 120_000, maxBuffer: 1 << 20, env: uninstrumentedEnv() });
  const seen = JSON.parse(stdout.trim().split('\n').pop()!) as Array<{ file: string; width: number; height: number; channels: number }>;
  return Promise.all(seen.map(async (s) => ({ ...s, data: await readFile(`${s.file}.raw`) })));
}

test('pngjs decodes every layout, size and stripe split to exactly the pixels given', () => {
  for (const c of cases) {
    const decoded = PNG.sync.read(c.png); // checks every chunk's CRC and the zlib stream's Adler-32
    assert.equal([decoded.width, decoded.height], [c.width, c.height], c.label);
    const expected = asRgba(c.raw, c.bands);
    assert.ok(decoded.data.equals(expected), `${c.label}: first difference at ${firstDifference(decoded.data, expected)}`);
  }
});

test('sharp decodes every layout, size and stripe split to exactly the pixels given', async () => {
  const decoded = await sharpDecode(cases.map((c) => c.png));
  cases.forEach((c, i) => {
    const d = decoded[i]!;
    assert.equal([d.width, d.height], [c.width, c.height], c.label);
    // sharp hands grey images out as RGB (grey + alpha as RGBA).
    assert.is(d.channels, c.bands < 3 ? c.bands + 2 : c.bands, c.label);
    const expected = d.channels === 3 ? rgb(asRgba(c.raw, c.bands)) : c.bands === 4 ? c.raw : asRgba(c.raw, c.bands);
    assert.ok(d.data.equals(expected), `${c.label}: first difference at ${firstDifference(d.data, expected)}`);
  });
});

test('libvips (matte loading the file again) decodes RGB and RGBA to exactly the pixels given', async () => {
  for (const c of cases.filter((k) => k.bands >= 3)) {
    // No step: libvips decodes, the encoder writes again, pngjs reads what libvips saw.
    const again = PNG.sync.read(await convert(c.png, 'png'));
    const expected = asRgba(c.raw, c.bands);
    assert.ok(again.data.equals(expected), `${c.label}: first difference at ${firstDifference(again.data, expected)}`);
  }
});

test('the same chunks as libvips pngsave (IHDR, pHYs, IDAT, IEND: no metadata), within 5% of its size', () => {
  for (const c of cases.filter((k) => k.reference)) {
    const ours = chunks(c.png);
    const theirs = chunks(c.reference!);
    assert.equal(layout(c.png), ['IHDR', 'pHYs', 'IDAT', 'IEND'], c.label);
    assert.equal(layout(c.reference!), ['IHDR', 'pHYs', 'IDAT', 'IEND'], c.label);
    assert.ok(ours[0]!.data.equals(theirs[0]!.data), `${c.label}: IHDR`);
    assert.ok(ours[1]!.data.equals(theirs[1]!.data), `${c.label}: pHYs`);
    assert.ok(c.png.length <= c.reference!.length * 1.05, `${c.label}: ${c.png.length} bytes, libvips ${c.reference!.length}`);
  }
});

test('12 MP RGBA (a remove-background result of the 4000x3000 photo): exact through pngjs and sharp, within 5% of libvips', async () => {
  const [width, height, bands] = [4000, 3000, 4];
  const raw = pixels(width, height, bands, 12);
  const png = probes.encodePng(raw, width, height, bands);
  const reference = probes.encodePng(raw, width, height, bands, { libvips: true });
  assert.ok(png.length <= reference.length * 1.05, `${png.length} bytes, libvips ${reference.length}`);
  const stripes = Math.ceil(height / Math.floor(STRIPE_BYTES / (1 + width * bands)));
  assert.is(chunks(png).filter((c) => c.type === 'IDAT').length, stripes, 'one IDAT a stripe');
  assert.ok(PNG.sync.read(png).data.equals(raw), 'pngjs');
  const [bySharp] = await sharpDecode([png]);
  assert.equal([bySharp!.width, bySharp!.height, bySharp!.channels], [width, height, bands]);
  assert.ok(bySharp!.data.equals(raw), `sharp: first difference at ${firstDifference(bySharp!.data, raw)}`);
});

test('the pipeline writes its PNG results (RGB, RGBA) with this encoder, pixel-exact', async () => {
  const [width, height] = [1500, 1000];
  for (const alpha of [false, true]) {
    const colour = (x: number, y: number): [number, number, number, number] => [(x * 7 + y) & 255, (x ^ y) & 255, (y * 5) & 255, alpha ? (x + 3 * y) & 255 : 255];
    const input = makePng(width, height, colour, { alpha });
    const out = await edit(input, [{ flip: 'h' }], { format: 'png' });
    const bands = alpha ? 4 : 3;
    const idats = chunks(out.data).filter((c) => c.type === 'IDAT').length;
    assert.is(idats, Math.ceil(height / Math.floor(STRIPE_BYTES / (1 + width * bands))), 'one IDAT a stripe: matte\'s encoder');
    const decoded = PNG.sync.read(out.data);
    let mismatch = -1;
    for (let y = 0; y < height && mismatch < 0; y++) {
      for (let x = 0; x < width; x++) {
        const expected = colour(width - 1 - x, y);
        const i = (y * width + x) * 4;
        if (expected.some((v, k) => decoded.data[i + k] !== v)) {
          mismatch = y * width + x;
          break;
        }
      }
    }
    assert.is(mismatch, -1, `alpha ${alpha}: first wrong pixel at index ${mismatch}`);
  }
});

test('a job stopped by its budget while the encoder deflates: job_timeout or aborted, and the next job runs', async () => {
  // Everything is lazy up to the encoder: its sink computes the 8000x6000 upscale (48 MP, ~3 s of
  // deflate on one core), so the stop comes while it runs.
  const small = makePng(400, 300, (x, y) => [(x * 13) & 255, (y * 7) & 255, (x * y) & 255], { alpha: false });
  const plan = [{ resize: { width: 8000, height: 6000, fit: 'cover' as const } }, { saturation: 0.5 }];
  const timedOut = await failure(edit(small, plan, { format: 'png', timeout: 0.3 }));
  assert.is(timedOut.error.code, 'job_timeout', timedOut.error.message);
  assert.ok(timedOut.ms < 10_000, `stopped after ${Math.round(timedOut.ms)} ms`);

  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error('gone')), 300);
  const aborted = await failure(edit(small, plan, { format: 'png', signal: controller.signal }));
  assert.is(aborted.error.code, 'aborted', aborted.error.message);
  assert.ok(aborted.ms < 10_000, `stopped after ${Math.round(aborted.ms)} ms`);

  const after = await edit(small, [{ flip: 'v' }], { format: 'png' });
  assert.equal([after.width, after.height], [400, 300]);
});

test.run();
