// run-tests: parallel
// Colour profiles and downscale precision (docs/api.md, input): each case is built here and
// compared with sharp (its own libvips 8.18 and lcms, in a child process), the tolerance beside it.
// The standard profiles are ghostscript's, from Debian's libgs-common (scripts/setup.sh installs it).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import zlib from 'node:zlib';
import { PNG } from 'pngjs';
import { edit } from '../../lib/index.js';
import { withPngChunk } from '../helpers/images.js';
import { fixture } from '../helpers/fixtures.js';
import { scratchDir } from '../helpers/scratch.js';
import { runSharp, type SharpJob } from '../helpers/sharp-chain.js';
import { distance, matteRgba, means, show, type Rgba8 } from '../helpers/compare.js';

const PROFILES = '/usr/share/color/icc/ghostscript';
const test = suite('colour profiles');
let dir = '';
scratchDir(test, 'matte-colour-', (path) => (dir = path));

const missing = !existsSync(join(PROFILES, 'ps_cmyk.icc'));
if (missing) console.log(`colour-profiles: skipped, ${PROFILES} is missing (Debian's libgs-common; scripts/setup.sh installs it)`);

/** An iCCP chunk's data: name, compression method 0, the deflated profile. */
const iccp = (profile: string) => Buffer.concat([Buffer.from('icc\0\0', 'latin1'), zlib.deflateSync(readFileSync(join(PROFILES, profile)))]);

/** sharp's RGBA of the file after the chain (e.g. a resize). */
async function sharpRgba(file: string, chain: SharpJob['chain'] = []): Promise<Rgba8> {
  const output = `${file}.${Math.random().toString(36).slice(2)}.raw`;
  const [info] = await runSharp([{ input: file, chain: [...chain, ['ensureAlpha'], ['raw']], output }], dir);
  return { width: info!.width, height: info!.height, data: await readFile(output) };
}

/** The faint alpha of the grey cases, 0-15 of 255 down the rows (the file averaged 7.5). */
const faintAlpha = (y: number, height: number) => Math.round((y * 15) / (height - 1));

/** A 16-bit grey + alpha PNG: grey from `grey(x)`, the faint alpha on the 16-bit scale. */
function grey16Alpha(width: number, height: number, grey: (x: number) => number): Buffer {
  const png = new PNG({ width, height, colorType: 4, bitDepth: 16, inputColorType: 4, inputHasAlpha: true });
  const samples = new Uint16Array(width * height * 2);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      samples[(y * width + x) * 2] = grey(x);
      samples[(y * width + x) * 2 + 1] = faintAlpha(y, height) * 257;
    }
  }
  (png as unknown as { data: Uint16Array }).data = samples;
  return PNG.sync.write(png, { colorType: 4, bitDepth: 16, inputColorType: 4, inputHasAlpha: true });
}

test('a 16-bit grey + alpha PNG with a profile keeps its transparency', async () => {
  if (missing) return;
  // default_gray.icc is sRGB's curve: sharp, which skips the profile of 16-bit grey, sees the same.
  const file = join(dir, 'ga16-gray.png');
  await writeFile(file, withPngChunk(grey16Alpha(64, 48, (x) => Math.round((x * 65535) / 63)), 'iCCP', iccp('default_gray.icc')));
  const [ours, reference] = [await matteRgba(await readFile(file), []), await sharpRgba(file)];
  const d = distance(ours, reference);
  assert.ok(d.max <= 1 && d.alpha === 0, show(d)); // rounding only; before the fix alpha was 237 away
  assert.ok(Math.abs(means(ours)[3]! - 7.5) < 0.1, `alpha mean ${means(ours)[3]}`);
});

test('a 16-bit grey + alpha PNG is converted by its profile as its 8-bit twin is', async () => {
  if (missing) return;
  // sgray.icc is not sRGB's curve: matte applies it at 16 bits; sharp applies it to 8-bit grey.
  const ga16 = grey16Alpha(64, 48, (x) => ((x * 4) & 255) * 257);
  const png8 = new PNG({ width: 64, height: 48, colorType: 4, inputColorType: 4, inputHasAlpha: true });
  png8.data = Buffer.alloc(64 * 48 * 2);
  for (let y = 0; y < 48; y++) for (let x = 0; x < 64; x++) png8.data.set([(x * 4) & 255, faintAlpha(y, 48)], (y * 64 + x) * 2);
  const file8 = join(dir, 'ga8-sgray.png');
  await writeFile(file8, withPngChunk(PNG.sync.write(png8, { colorType: 4, inputColorType: 4, inputHasAlpha: true }), 'iCCP', iccp('sgray.icc')));
  const ours = await matteRgba(withPngChunk(ga16, 'iCCP', iccp('sgray.icc')), []);
  const d = distance(ours, await sharpRgba(file8));
  assert.ok(d.max <= 1 && d.alpha === 0, show(d)); // 16 vs 8 bits through lcms: 1 level at most
});

/** An RGB source of saturated and dark colours (vertical bands, darkening downwards), as raw samples. */
async function colourBands(): Promise<string> {
  const [width, height] = [96, 64];
  const colours = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0], [0, 255, 255], [128, 64, 32]];
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) raw.set(colours[Math.floor(x / 16)]!.map((c) => Math.round(c * (1 - (0.5 * y) / height))), (y * width + x) * 3);
  const file = join(dir, 'bands.raw');
  await writeFile(file, raw);
  return file;
}

/** A CMYK JPEG made by sharp from the bands: tagged with `profile`, or untagged. */
async function cmykJpeg(name: string, profile?: string): Promise<string> {
  const output = join(dir, name);
  const chain: SharpJob['chain'] = profile ? [['withIccProfile', join(PROFILES, profile)]] : [['toColourspace', 'cmyk']];
  await runSharp([{ input: await colourBands(), options: { raw: { width: 96, height: 64, channels: 3 } }, chain: [...chain, ['jpeg', { quality: 95 }]], output }], dir);
  return output;
}

// Tolerances: what remains between libvips 8.14 + lcms 2.14 and sharp's 8.18 + lcms 2.19 on these
// saturated, partly out-of-gamut colours, well under the distances before the perceptual intent.
// sharp's direct 8-bit transform is itself off the profiles' exact evaluation (lcms's jpgicc -c0):
// untagged 3.6 against matte's 1.2, ps_cmyk 3.3 against 3.4, default_cmyk 0.7 against 1.0.
const CMYK_CASES: Array<[string, string | undefined, number]> = [
  // holds only the perceptual table: ignored before (29.7 away), read now
  ['a CMYK JPEG whose profile supports only perceptual', 'ps_cmyk.icc', 3.5],
  // a full profile: 6.9 away through lcms' direct 8-bit table, 0.8 through the float PCS
  ['a CMYK JPEG with a standard profile', 'default_cmyk.icc', 1.5],
  // no profile: libvips' built-in CMYK profile, as sharp (13.3 away through colourspace)
  ['an untagged CMYK JPEG', undefined, 5],
];
CMYK_CASES.forEach(([name, profile, tolerance], i) => {
  test(`${name} matches sharp (mean within ${tolerance}/255)`, async () => {
    if (missing) return;
    const file = await cmykJpeg(`cmyk-${i}.jpg`, profile);
    const [ours, reference] = [await matteRgba(await readFile(file), []), await sharpRgba(file)];
    const d = distance(ours, reference);
    assert.ok(d.mean <= tolerance, show(d));
    means(ours).forEach((m, c) => assert.ok(Math.abs(m - means(reference)[c]!) <= 2 * tolerance, `channel ${c}: ${m} vs ${means(reference)[c]}`));
  });
});

test('a JPEG at 2.25x reduction is within 0.5/255 of a full decode, and near sharp', async () => {
  // A real photo, 450x600, reduced to 200 px wide: shrink-on-load at 1/2 left lanczos3 1.125x.
  const portrait = (await edit(await readFile(await fixture('lenna.png')), [{ resize: { width: 450, height: 600, fit: 'cover' } }], { format: 'jpeg', quality: 90 })).data;
  const file = join(dir, 'portrait.jpg');
  await writeFile(file, portrait);
  const resize = { resize: { width: 200 } };
  const ours = await matteRgba(portrait, [resize]);
  const fullDecode = await matteRgba((await edit(portrait, [{ flip: 'h' }, { flip: 'h' }], { format: 'png' })).data, [resize]);
  const d = distance(ours, fullDecode);
  assert.ok(d.mean <= 0.5, `from a full decode: ${show(d)}`); // 1.04 with the 1/2 shrink
  // sharp decodes this one in full too; its libvips 8.18's lanczos3 rounds differently from 8.14's.
  const s = distance(ours, await sharpRgba(file, [['resize', 200]]));
  assert.ok(s.mean <= 1, `from sharp: ${show(s)}`);
});

test.run();
