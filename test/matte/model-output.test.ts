// run-tests: parallel
// The model's output to the matte (native/matte/model.cc, to_matte), read where ONNX Runtime left
// it: minmax rescaling with its ties rounded half away from zero (std::lround), a NaN counted as
// background, a constant output, and the input tensor written straight into the session's arena
// run after run. Exact bytes, on a tiny channel-mean model (test/helpers/onnx.ts) through
// the probes build's infer.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { probes } from '../helpers/probes.js'; // first: lib/ then loads the probes build (infer)
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadModel, type ModelEntry } from '../../lib/index.js';
import { channelMeanModel } from '../helpers/onnx.js';
import { scratchDir } from '../helpers/scratch.js';

let dir = '';
scratchDir(test, 'matte-model-output-', (path) => (dir = path));

/** A 4x2 channel-mean model with the given post-process, loaded under `name`. */
async function meanModel(name: string, postprocess: ModelEntry['output']['postprocess']) {
  const data = channelMeanModel(4, 2);
  await writeFile(join(dir, `${name}.onnx`), data);
  const entry: ModelEntry = {
    license: 'MIT',
    source: { npm: 'none@0.0.0', files: [] },
    sha256: createHash('sha256').update(data).digest('hex'),
    input: { width: 4, height: 2, divide: 1, mean: [0, 0, 0], std: [1, 1, 1] },
    output: { name: 'matte', postprocess },
  };
  return loadModel(name, { dir, entry });
}

/** The planar input whose three planes all hold `values` (their mean is then each value). */
function planes(values: number[]): Float32Array {
  const chw = new Float32Array(values.length * 3);
  values.forEach((v, i) => {
    chw[i] = v;
    chw[values.length + i] = v;
    chw[2 * values.length + i] = v;
  });
  return chw;
}

test('minmax: rescaled to 0..255, ties rounded away from zero, NaN as background', async () => {
  const model = await meanModel('minmax-ties', 'minmax');
  // low 0, high 2: a scale of 127.5, so 1 -> 127.5 -> 128 and 0.5 -> 63.75 -> 64.
  const out = await probes.infer(model.handle, planes([0, 1, 2, 0.5, 1.5, 0.25, Number.NaN, 2]));
  assert.equal([...out.data], [0, 128, 255, 64, 191, 32, 0, 255]);
  // A negative low: -1..1, the NaN (0) lands in the middle.
  const shifted = await probes.infer(model.handle, planes([-1, 1, Number.NaN, 0, -0.5, 0.5, 1, -1]));
  assert.equal([...shifted.data], [0, 255, 128, 128, 64, 191, 255, 0]);
});

test('minmax on a constant output gives 0; clamp keeps 0..1, rounding ties up', async () => {
  const constant = await meanModel('minmax-constant', 'minmax');
  assert.equal([...(await probes.infer(constant.handle, planes(Array(8).fill(0.7)))).data], Array(8).fill(0));
  const clamp = await meanModel('clamp-steps', 'clamp');
  // 0.5 -> 127.5 -> 128, 0.25 -> 63.75 -> 64, 0.75 -> 191.25 -> 191.
  const out = await probes.infer(clamp.handle, planes([-1, 0, 0.5, 1, 2, Number.NaN, 0.25, 0.75]));
  assert.equal([...out.data], [0, 0, 128, 255, 255, 0, 64, 191]);
});

test('the input tensor from the arena: run after run, each result is its own input', async () => {
  const model = await meanModel('arena-runs', 'clamp');
  // Different inputs alternated and run at once: no run sees another's (or a stale) tensor.
  const a = planes([0, 0.25, 0.5, 0.75, 1, 0.75, 0.5, 0.25]);
  const b = planes([1, 0.75, 0.5, 0.25, 0, 0.25, 0.5, 0.75]);
  const want = (chw: Float32Array) => [...chw.subarray(0, 8)].map((v) => Math.round(v * 255));
  for (let round = 0; round < 3; round++) {
    const [ra, rb] = await Promise.all([probes.infer(model.handle, a), probes.infer(model.handle, b)]);
    assert.equal([...ra.data], want(a), `round ${round}, a`);
    assert.equal([...rb.data], want(b), `round ${round}, b`);
  }
});

test.run();
