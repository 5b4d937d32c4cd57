// run-tests: parallel
// The fetcher's conversion of IS-Net to fp32 (models/fetch.ts, models/derive.ts), without a
// download: from the verified fp16 original that the fetch keeps beside the model (CI fetches
// isnet first; skipped when it is not there). A stored original is converted in place and kept,
// the result has the registry's sha256, loads, and gives the original's matte on lenna within a
// small tolerance; the unconverted original and a partial file are refused at load with clear errors.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { copyFile, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadModel, modelRegistry, removeBackground, type ModelEntry } from '../../lib/index.js';
import { modelsDir, sha256File } from '../../lib/models.js';
import { originalPath } from '../../models/derive.js';
import { fetchModel } from '../../models/fetch.js';
import { decode } from '../helpers/images.js';
import { fixture } from '../helpers/fixtures.js';
import { scratchDir } from '../helpers/scratch.js';
import { modelError } from '../helpers/failure.js';

let dir = '';
scratchDir(test, 'matte-fetch-convert-', (path) => (dir = path));

const original = originalPath('isnet', modelsDir());
const define = existsSync(original) ? test : test.skip;

async function alphaOf(model: string, image: string): Promise<Buffer> {
  const out = await decode((await removeBackground(image, { model, refine: false })).data);
  const alpha = Buffer.alloc(out.width * out.height);
  for (let i = 0; i < alpha.length; i++) alpha[i] = out.data[i * 4 + 3]!;
  return alpha;
}

test('the registry: isnet is converted to fp32 at fetch, with the checksums of both files', async () => {
  const isnet = (await modelRegistry()).models.isnet!;
  assert.is(isnet.source.convert, 'fp32');
  assert.match(isnet.source.sha256 ?? '', /^[0-9a-f]{64}$/);
  assert.match(isnet.sha256 ?? '', /^[0-9a-f]{64}$/);
  assert.is.not(isnet.source.sha256, isnet.sha256);
});

define('a stored fp16 original is converted in place without a download, kept beside, and loads', async () => {
  const entry = (await modelRegistry()).models.isnet!;
  const stored = join(dir, 'isnet.onnx');
  await copyFile(original, stored);
  // The original in place of the model (as fetched before the conversion): refused at load, naming the command.
  await modelError(loadModel('isnet', { dir }), /is "isnet" as fetched, not yet converted to fp32: run `npx matte models fetch isnet` to convert it \(no download\)/);

  assert.is(await fetchModel('isnet', { dir, quiet: true }), stored);
  assert.is(await sha256File(stored), entry.sha256);
  assert.is(await sha256File(originalPath('isnet', dir)), entry.source.sha256);
  assert.ok((await stat(stored)).size > 1.9 * (await stat(originalPath('isnet', dir))).size, 'fp32 is twice the fp16 file');
  assert.equal((await readdir(dir)).sort(), ['isnet.onnx', 'isnet.original.onnx'], 'no temporary file is left');

  // Fetched again: kept as it is.
  const before = (await stat(stored)).mtimeMs;
  await fetchModel('isnet', { dir, quiet: true });
  assert.is((await stat(stored)).mtimeMs, before);

  // Only the original left: converted again, still without a download.
  await writeFile(stored, (await readFile(stored)).subarray(0, 1 << 20));
  await modelError(loadModel('isnet', { dir }), /has sha256 [0-9a-f]{64}, the registry expects/);
  await fetchModel('isnet', { dir, quiet: true });
  assert.is(await sha256File(stored), entry.sha256);
});

define('the fp32 model\'s matte on lenna is the fp16 original\'s within rounding (refine off)', async () => {
  const entry = (await modelRegistry()).models.isnet!;
  const lenna = await fixture('lenna.png');
  await loadModel('isnet', { dir });
  const converted = await alphaOf('isnet', lenna);
  // The original, loaded as a custom model with its own checksum.
  const originalEntry: ModelEntry = { ...entry, sha256: entry.source.sha256!, source: { npm: entry.source.npm } };
  await loadModel('isnet-fp16', { entry: originalEntry, path: originalPath('isnet', dir) });
  const half = await alphaOf('isnet-fp16', lenna);
  assert.is(converted.length, half.length);
  let sum = 0;
  let max = 0;
  let differ = 0;
  for (let i = 0; i < half.length; i++) {
    const d = Math.abs(converted[i]! - half[i]!);
    sum += d;
    max = Math.max(max, d);
    if (d > 2) differ++;
  }
  const mad = sum / half.length;
  console.log(`  isnet fp32 vs fp16 on lenna: MAD ${mad.toFixed(4)}/255, max ${max}, ${differ} pixels differ by more than 2`);
  // Measured: MAD 0.0011/255, at most 1 level (ONNX Runtime computed in fp32 either way; the
  // fp16 model rounds between nodes).
  assert.ok(mad <= 0.05, `MAD ${mad}`);
  assert.ok(max <= 4, `max ${max}`);
  assert.ok(differ / half.length < 0.001, `${differ} pixels differ by more than 2/255`);
  // A real matte: background and subject are both there.
  const transparent = half.filter((v) => v < 16).length / half.length;
  const subject = half.filter((v) => v > 128).length / half.length;
  assert.ok(transparent > 0.1 && subject > 0.05, `transparent ${transparent}, subject ${subject}`);
});

test.run();
