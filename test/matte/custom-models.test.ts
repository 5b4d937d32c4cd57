// run-tests: parallel
// Custom models and models by name: an entry that points at its file by path and sha256, the
// sigmoid post-process (BiRefNet-style logits), a model_error naming the entry when the file does
// not fit it or the entry is wrong, and a model loaded only when asked for by name.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadModel, loadedModelNames, removeBackground, type ModelEntry } from '../../lib/index.js';
import { channelMeanModel } from '../helpers/onnx.js';
import { decode, pixel, solid } from '../helpers/images.js';
import { scratchDir } from '../helpers/scratch.js';
import { modelError } from '../helpers/failure.js';

let dir = '';
scratchDir(test, 'matte-custom-', (path) => (dir = path));

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** A tiny channel-mean model written to a file of its own name (not <name>.onnx), and its entry. */
async function custom(file: string, postprocess: string, input: Partial<ModelEntry['input']> = {}): Promise<{ entry: ModelEntry; path: string }> {
  const data = channelMeanModel(16, 16);
  const path = join(dir, file);
  await writeFile(path, data);
  return {
    path,
    entry: {
      license: 'MIT',
      source: { npm: 'none@0.0.0', files: [] },
      sha256: sha256(data),
      input: { width: 16, height: 16, divide: 1, mean: [0, 0, 0], std: [1, 1, 1], ...input },
      output: { name: 'matte', postprocess: postprocess as ModelEntry['output']['postprocess'] },
    },
  };
}

const alphaOf = async (out: { data: Buffer }) => pixel(await decode(out.data), 4, 4)[3];

test('sigmoid: logits through the logistic function (x = (R + G + B) / 3 / std - mean)', async () => {
  // (x - 128) / 64 per channel: a grey of 128 + 64k gives the logit k.
  const { entry, path } = await custom('logits.model', 'sigmoid', { mean: [128, 128, 128], std: [64, 64, 64] });
  await loadModel('logits', { entry, path });
  for (const k of [-2, 0, 1]) {
    const grey = 128 + 64 * k;
    const out = await removeBackground(solid(16, 16, [grey, grey, grey], { alpha: false }), { model: 'logits', refine: false });
    assert.is(await alphaOf(out), Math.round(255 / (1 + Math.exp(-k))), `logit ${k}`);
  }
});

test('a custom entry by path and sha256 is used by name, beside the default model', async () => {
  const { entry, path } = await custom('mean.bin', 'clamp', { divide: 255 });
  await loadModel('u2netp');
  await loadModel('mean', { entry, path });
  assert.ok(loadedModelNames().includes('mean'));
  const out = await removeBackground(solid(16, 16, [200, 100, 30], { alpha: false }), { model: 'mean', refine: false });
  assert.is(await alphaOf(out), 110);
  // A wrong checksum is refused.
  await modelError(loadModel('mean2', { entry: { ...entry, sha256: '0'.repeat(64) }, path }), /sha256/);
  await modelError(loadModel('mean3', { entry, path: join(dir, 'nothing.onnx') }), /model "mean3": no file at/);
});

test('a file whose input or output does not fit its entry: model_error naming the model', async () => {
  const { entry, path } = await custom('fits.onnx', 'clamp');
  await modelError(loadModel('wrong-size', { entry: { ...entry, input: { ...entry.input, width: 320, height: 320 } }, path }), /model "wrong-size": .*input shape \[1x3x16x16\] does not match .*320x320/);
  await modelError(loadModel('wrong-output', { entry: { ...entry, output: { name: 'alpha', postprocess: 'clamp' } }, path }), /model "wrong-output": .*no output named "alpha"/);
});

test('an entry with an unknown post-process is refused at load, naming the entry', async () => {
  const { entry, path } = await custom('softmax.onnx', 'softmax');
  await modelError(loadModel('softmaxed', { entry, path }), /model entry "softmaxed": unknown output.postprocess "softmax" \(one of minmax, clamp, sigmoid, sigmoid_minmax\)/);
  assert.not.ok(loadedModelNames().includes('softmaxed'));
});

test('a model nobody asks for is not loaded; asked for by name, it loads on first use', async () => {
  assert.not.ok(loadedModelNames().includes('isnet'), 'isnet is never loaded unless asked for');
  // An unknown name: model_error from the registry lookup (the server answers 400 before this).
  await modelError(removeBackground(solid(16, 16, [1, 2, 3], { alpha: false }), { model: 'no-such-model' }), /unknown model "no-such-model"/);
  assert.not.ok(loadedModelNames().includes('no-such-model'));
});

test.run();
