// run-tests: parallel
// The fp16 -> fp32 model rewrite (models/convert-fp32.ts): exact widening of every fp16 value, the
// graph's casts and types rewritten, the result loads in the addon and gives the fp16 model's
// matte on a real image within rounding, and what it cannot convert is refused before anything
// is written (models/derive.ts checks the result's sha256 too).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadModel, removeBackground, type ModelEntry } from '../../lib/index.js';
import { convertModelToFloat32, float16BytesToFloat32 } from '../../models/convert-fp32.js';
import { deriveModel } from '../../models/derive.js';
import { decode } from '../helpers/images.js';
import { fixture } from '../helpers/fixtures.js';
import { halfBits, halfValue, onnx, tinyHalfModel, TINY_BIAS, TINY_WEIGHTS } from '../helpers/onnx-fp16.js';
import { scratchDir } from '../helpers/scratch.js';

let dir = '';
scratchDir(test, 'matte-convert-', (path) => (dir = path));

async function rejects(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  try {
    await promise;
    assert.unreachable('should have failed');
  } catch (err) {
    assert.match((err as Error).message, pattern);
  }
}

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');
const FLOAT = onnx.TensorProto.DataType.FLOAT;

test('fp16 bit patterns widen exactly: normals, subnormals, signed zero, infinities, NaN', () => {
  const bits = [0x3c00, 0xc000, 0x7bff, 0x0001, 0x03ff, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x3555];
  const raw = new Uint8Array(bits.flatMap((b) => [b & 0xff, b >> 8]));
  // Read at an odd offset: raw_data is a view into the file at any alignment.
  const shifted = new Uint8Array(raw.length + 1);
  shifted.set(raw, 1);
  const out = new Float32Array(float16BytesToFloat32(shifted.subarray(1)).slice().buffer);
  assert.equal(Array.from(out.subarray(0, 6)), [1, -2, 65504, 2 ** -24, 1023 * 2 ** -24, -0]);
  assert.ok(Object.is(out[5], -0));
  assert.is(out[6], Infinity);
  assert.is(out[7], -Infinity);
  assert.ok(Number.isNaN(out[8]));
  assert.is(out[9], Math.fround(halfValue(0x3555)));
  assert.throws(() => float16BytesToFloat32(new Uint8Array(3)), /not a whole number/);
});

test('the rewrite: fp16 initializers (raw_data and int32_data), Constant values, Cast targets and declared types become fp32', () => {
  const { bytes, summary } = convertModelToFloat32(tinyHalfModel(8, 8));
  assert.equal(summary, { tensors: 3, casts: 1, types: 1 });
  const model = onnx.ModelProto.decode(bytes);
  const graph = model.graph!;
  const weight = graph.initializer!.find((t) => t.name === 'weight')!;
  assert.is(weight.dataType, FLOAT);
  const widened = new Float32Array(new Uint8Array(weight.rawData!).buffer);
  assert.equal(Array.from(widened), halfBits(TINY_WEIGHTS).map(halfValue));
  const bias = graph.initializer!.find((t) => t.name === 'bias')!;
  assert.is(bias.dataType, FLOAT);
  assert.is(bias.int32Data!.length, 0);
  assert.equal(Array.from(new Float32Array(new Uint8Array(bias.rawData!).buffer)), halfBits([TINY_BIAS]).map(halfValue));
  const constant = graph.node!.find((n) => n.opType === 'Constant')!.attribute![0]!.t!;
  assert.is(constant.dataType, FLOAT);
  for (const cast of graph.node!.filter((n) => n.opType === 'Cast')) assert.is(Number(cast.attribute![0]!.i), FLOAT, cast.name ?? '');
  assert.is(graph.valueInfo![0]!.type!.tensorType!.elemType, FLOAT);
  // Everything else is as it was.
  assert.equal(graph.node!.map((n) => n.opType), ['Cast', 'Conv', 'Constant', 'Add', 'Sigmoid', 'Cast']);
  assert.is(model.producerName, 'matte-test');
  assert.is(Number(model.opsetImport![0]!.version), 15);
  // Deterministic: the registry pins the result's sha256.
  assert.is(sha256(convertModelToFloat32(tinyHalfModel(8, 8)).bytes), sha256(bytes));
});

test('the converted model loads and gives the fp16 model\'s matte on a real image within rounding', async () => {
  const lenna = await fixture('lenna.png');
  const half = tinyHalfModel(64, 64);
  const full = convertModelToFloat32(half).bytes;
  const alphas: Buffer[] = [];
  for (const [name, bytes] of [['tiny16', half], ['tiny32', full]] as const) {
    const path = join(dir, `${name}.onnx`);
    await writeFile(path, bytes);
    const entry: ModelEntry = {
      license: 'MIT',
      source: { npm: 'none@0.0.0', files: [] },
      sha256: sha256(bytes),
      input: { width: 64, height: 64, divide: 255, mean: [0.5, 0.5, 0.5], std: [0.1, 0.1, 0.1] },
      output: { name: 'matte', postprocess: 'clamp' },
    };
    await loadModel(name, { entry, path });
    const out = await decode((await removeBackground(lenna, { model: name, refine: false })).data);
    const alpha = Buffer.alloc(out.width * out.height);
    for (let i = 0; i < alpha.length; i++) alpha[i] = out.data[i * 4 + 3]!;
    alphas.push(alpha);
  }
  const [a, b] = alphas as [Buffer, Buffer];
  let sum = 0;
  let max = 0;
  let low = 255;
  let high = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i]! - b[i]!);
    sum += d;
    max = Math.max(max, d);
    low = Math.min(low, a[i]!);
    high = Math.max(high, a[i]!);
  }
  // A real matte, not a constant.
  const spread = high - low;
  assert.ok(spread > 64, `spread ${spread}`);
  console.log(`  tiny fp16 vs fp32 matte on lenna: MAD ${(sum / a.length).toFixed(4)}/255, max ${max}, spread ${spread}`);
  assert.ok(sum / a.length <= 0.5, `MAD ${sum / a.length}`);
  assert.ok(max <= 2, `max ${max}`);
});

test('what cannot be converted is refused with a clear error', () => {
  const good = tinyHalfModel(8, 8);
  assert.throws(() => convertModelToFloat32(good.subarray(0, good.length - 40)), /not an ONNX model/);
  assert.throws(() => convertModelToFloat32(new TextEncoder().encode('not a model at all')), /not an ONNX model/);
  const dtype = onnx.NodeProto.create({ opType: 'EyeLike', name: 'eye', input: ['matte'], output: ['eye'], attribute: [{ name: 'dtype', type: onnx.AttributeProto.AttributeType.INT, i: onnx.TensorProto.DataType.FLOAT16 }] });
  assert.throws(() => convertModelToFloat32(tinyHalfModel(8, 8, [dtype])), /node "eye" \(EyeLike\): attribute "dtype" asks for float16/);
  // An fp32 model has nothing to convert: refused rather than stored under a new checksum.
  assert.throws(() => convertModelToFloat32(convertModelToFloat32(good).bytes), /no float16/);
});

test('deriveModel: the result must have the entry\'s sha256, else nothing is stored', async () => {
  const half = tinyHalfModel(8, 8);
  const full = convertModelToFloat32(half).bytes;
  const entry: ModelEntry = {
    license: 'MIT',
    source: { npm: 'none@0.0.0', files: [], sha256: sha256(half), convert: 'fp32' },
    sha256: sha256(full),
    input: { width: 8, height: 8, divide: 255, mean: [0, 0, 0], std: [1, 1, 1] },
    output: { name: 'matte', postprocess: 'clamp' },
  };
  assert.is(sha256(await deriveModel('tiny', entry, half)), entry.sha256);
  await rejects(deriveModel('tiny', { ...entry, sha256: '0'.repeat(64) }, half), /tiny: the fp32 conversion has sha256 [0-9a-f]{64}, the registry expects 0{64}; nothing is stored/);
  await rejects(deriveModel('tiny', entry, half.subarray(0, 100)), /tiny: the conversion to fp32 failed: not an ONNX model/);
  await rejects(deriveModel('tiny', { ...entry, source: { ...entry.source, convert: 'int8' as 'fp32' } }, half), /unknown source.convert "int8"/);
  // An entry without `convert` stores what was fetched, unchanged.
  const plain = { ...entry, source: { npm: 'none@0.0.0', files: [] } };
  assert.is(await deriveModel('tiny', plain, half), half);
});

test.run();
