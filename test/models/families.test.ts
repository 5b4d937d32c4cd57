// run-tests: parallel
// Each model family of the registry (rembg's u2net, isnet, birefnet sessions) run through the real
// addon on a graph of the family's input and output shapes (test/helpers/onnx-families.ts) whose
// first output is the normalised red plane: the alpha of every pixel must be rembg's recipe
// computed here from its definition: x / max(image), then (x - mean) / std, the first output, then
// min-max (u2net, isnet) or the logistic function and min-max (birefnet). rembg truncates where
// matte rounds (one level), and the ramps' rounding to 8 bits moves a logistic's steepest part by
// a fraction of a level more: within 1.5 levels.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadModel, modelRegistry, removeBackground, type ModelEntry } from '../../lib/index.js';
import { decode, makePng } from '../helpers/images.js';
import { planesModel } from '../helpers/onnx-families.js';
import { scratchDir } from '../helpers/scratch.js';
import { modelError } from '../helpers/failure.js';

let dir = '';
scratchDir(test, 'matte-families-', (path) => (dir = path));

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

// Ramps (which the resampling to the model's size and back keeps as they are) up to 200 only, so
// that rembg's division by the image's largest value is not x / 255.
let side = 1;
const colour = (x: number, y: number): [number, number, number] => [
  Math.round(10 + (190 * x) / (side - 1)),
  Math.round(150 - (140 * y) / (side - 1)),
  Math.round((60 * (x + y)) / (side - 1)),
];

/** rembg's recipe for the red plane: the matte, 0..255 (rounded, where rembg truncates). */
function reference(size: number, entry: ModelEntry): Float64Array {
  let max = 0;
  for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) max = Math.max(max, ...colour(x, y));
  const values = new Float64Array(size * size);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      let v = (colour(x, y)[0] / max - entry.input.mean[0]) / entry.input.std[0];
      if (entry.output.postprocess === 'sigmoid_minmax') v = 1 / (1 + Math.exp(-v));
      values[y * size + x] = v;
    }
  }
  let low = Infinity;
  let high = -Infinity;
  for (const v of values) [low, high] = [Math.min(low, v), Math.max(high, v)];
  return values.map((v) => ((v - low) / (high - low)) * 255);
}

const FAMILIES: Array<{ family: string; model: string; input: string; outputs: string[] }> = [
  // u2netp's own names (its first output, d0, is "1959"); u2net, u2net_human_seg and silueta are the same export.
  { family: 'u2net', model: 'u2net', input: 'input.1', outputs: ['1959', '1960', '1961'] },
  { family: 'isnet', model: 'isnet-general-use', input: 'input_image', outputs: ['output_image', 'side_1', 'side_2'] },
  { family: 'birefnet', model: 'birefnet-general', input: 'input_image', outputs: ['output_image', 'side_1'] },
];

for (const { family, model, input, outputs } of FAMILIES) {
  test(`${family} (${model}): the registry's recipe is rembg's, pixel for pixel`, async () => {
    const entry = (await modelRegistry()).models[model]!;
    assert.is(entry.family, family);
    const size = entry.input.width;
    side = size;
    const data = planesModel(size, { input, outputs });
    const path = join(dir, `${model}.onnx`);
    await writeFile(path, data);
    // The registry's entry with the test file's checksum in place of the publisher's.
    const tested: ModelEntry = { ...entry, sha256: sha256(data), source: { url: 'http://127.0.0.1:9/none' } };
    await loadModel(`test-${model}`, { entry: tested, path });
    const out = await removeBackground(makePng(size, size, (x, y) => colour(x, y), { alpha: false }), { model: `test-${model}`, refine: false });
    const image = await decode(out.data);
    assert.is(image.width, size);
    const expected = reference(size, entry);
    let worst = 0;
    for (let i = 0; i < size * size; i++) worst = Math.max(worst, Math.abs(image.data[i * 4 + 3]! - expected[i]!));
    assert.ok(worst < 1.5, `the largest difference from rembg's recipe is ${worst.toFixed(2)} levels`);
  });
}

test('a file whose input or outputs do not fit its entry: one clear model_error', async () => {
  const registry = await modelRegistry();
  const small = planesModel(320, { input: 'input.1', outputs: ['1959'] });
  const path = join(dir, 'u2net-shaped.onnx');
  await writeFile(path, small);
  const birefnet = { ...registry.models['birefnet-general']!, sha256: sha256(small) };
  await modelError(loadModel('birefnet-wrong', { entry: birefnet, path }), /model "birefnet-wrong": .*input shape \[1x3x320x320\] does not match its registry entry \[1x3x1024x1024\]/);
  const u2net = registry.models.u2net!;
  await modelError(
    loadModel('u2net-index', { entry: { ...u2net, sha256: sha256(small), output: { index: 3, postprocess: 'minmax' } }, path }),
    /model "u2net-index": the model has 1 outputs, no output 3/,
  );
  await modelError(loadModel('u2net-md5', { entry: u2net, path }), /model file .* has md5 [0-9a-f]{32}, the publisher's is 60024c5c889badc19c04ad937298a77b/);
});

test.run();
