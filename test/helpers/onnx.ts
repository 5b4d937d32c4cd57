// Tiny ONNX models written byte by byte (protobuf wire format), so that the model code's paths
// that the real models do not take (float16 input and output, a wrong output shape, a failure
// during inference) are tested without any model file from outside.
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ModelEntry } from '../../lib/models.js';

type Field = Buffer;

function varint(value: number | bigint): Buffer {
  let v = BigInt.asUintN(64, BigInt(value));
  const bytes: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v) byte |= 0x80;
    bytes.push(byte);
  } while (v);
  return Buffer.from(bytes);
}

const key = (field: number, wire: number) => varint((field << 3) | wire);
const int = (field: number, value: number | bigint): Field => Buffer.concat([key(field, 0), varint(value)]);
const bytes = (field: number, value: Buffer | string): Field => {
  const b = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return Buffer.concat([key(field, 2), varint(b.length), b]);
};
const message = (field: number, ...parts: Field[]): Field => bytes(field, Buffer.concat(parts));

export const FLOAT = 1;
export const INT64 = 7;
export const FLOAT16 = 10;

/** A dimension: a number, or a name for a dimension the model leaves free. */
type Dim = number | string;

function valueInfo(field: number, name: string, elemType: number, shape: Dim[]): Field {
  const dims = shape.map((d) => message(1, typeof d === 'number' ? int(1, d) : bytes(2, d)));
  return message(field, bytes(1, name), message(2, message(1, int(1, elemType), message(2, ...dims))));
}

interface Attribute {
  name: string;
  int?: number;
  ints?: number[];
}

function attribute(a: Attribute): Field {
  if (a.ints) return message(5, bytes(1, a.name), int(20, 7), ...a.ints.map((v) => int(8, v)));
  return message(5, bytes(1, a.name), int(20, 2), int(3, a.int ?? 0));
}

function node(op: string, inputs: string[], outputs: string[], attributes: Attribute[] = []): Field {
  return message(1, ...inputs.map((i) => bytes(1, i)), ...outputs.map((o) => bytes(2, o)), bytes(3, `${op}_${outputs[0]}`), bytes(4, op), ...attributes.map(attribute));
}

function int64Initializer(name: string, values: number[]): Field {
  const raw = Buffer.alloc(values.length * 8);
  values.forEach((v, i) => raw.writeBigInt64LE(BigInt(v), i * 8));
  return message(5, int(1, values.length), int(2, INT64), bytes(8, name), bytes(9, raw));
}

function model(nodes: Field[], inputs: Field[], outputs: Field[], initializers: Field[] = []): Buffer {
  const graph = message(7, ...nodes, bytes(2, 'matte-test'), ...initializers, ...inputs, ...outputs);
  return Buffer.concat([int(1, 8), bytes(2, 'matte-test'), graph, message(8, bytes(1, ''), int(2, 13))]);
}

/**
 * input [1,3,H,W] -> mean over the 3 channels -> output "matte" [1,1,H,W]. With `half`, input and
 * output are float16 (Cast to float around the mean): the matte of a pixel is the mean of its
 * normalised channels. `axes` (default [1]) averages over other axes too, for a wrong output shape.
 */
export function channelMeanModel(width: number, height: number, options: { half?: boolean; axes?: number[] } = {}): Buffer {
  const type = options.half ? FLOAT16 : FLOAT;
  const axes = options.axes ?? [1];
  const outputShape = [1, 3, height, width].map((d, i) => (axes.includes(i) ? 1 : d));
  const nodes = options.half
    ? [
        node('Cast', ['input'], ['input_f'], [{ name: 'to', int: FLOAT }]),
        node('ReduceMean', ['input_f'], ['mean_f'], [{ name: 'axes', ints: axes }, { name: 'keepdims', int: 1 }]),
        node('Cast', ['mean_f'], ['matte'], [{ name: 'to', int: FLOAT16 }]),
      ]
    : [node('ReduceMean', ['input'], ['matte'], [{ name: 'axes', ints: axes }, { name: 'keepdims', int: 1 }])];
  return model(nodes, [valueInfo(11, 'input', type, [1, 3, height, width])], [valueInfo(12, 'matte', type, outputShape)]);
}

/**
 * A model whose input size is left free and whose only node reshapes the input to 1x1x5x5: it
 * loads, and fails during inference for any input that is not 25 values.
 */
export function failingModel(): Buffer {
  return model(
    [node('Reshape', ['input', 'shape'], ['matte'])],
    [valueInfo(11, 'input', FLOAT, [1, 3, 'h', 'w'])],
    [valueInfo(12, 'matte', FLOAT, [1, 1, 'h', 'w'])],
    [int64Initializer('shape', [1, 1, 5, 5])],
  );
}

/**
 * The channel-mean model written as `<name>.onnx` in `dir`, and its registry entry with that path:
 * its matte is the pixel's brightness (divide 255, clamped), so a test knows where the subject is.
 */
export async function brightnessModel(dir: string, name: string, size = 16): Promise<ModelEntry & { path: string }> {
  const data = channelMeanModel(size, size);
  const path = join(dir, `${name}.onnx`);
  await writeFile(path, data);
  return {
    license: 'MIT',
    source: { npm: 'none@0.0.0', files: [] },
    sha256: createHash('sha256').update(data).digest('hex'),
    input: { width: size, height: size, divide: 255, mean: [0, 0, 0], std: [1, 1, 1] },
    output: { name: 'matte', postprocess: 'clamp' },
    path,
  } as ModelEntry & { path: string };
}

/**
 * brightnessModel() as a server's one model: its file and a models file (MATTE_MODELS_FILE) in
 * `dir`, and the environment that makes a server load it, for tests where what is asserted does
 * not depend on which model made the matte.
 */
export async function brightnessModelEnv(dir: string, size = 64): Promise<{ entry: ModelEntry & { path: string }; env: { MATTE_MODELS: string; MATTE_MODELS_FILE: string } }> {
  const entry = await brightnessModel(dir, 'mean', size);
  const file = join(dir, 'models.json');
  await writeFile(file, JSON.stringify({ models: { mean: entry } }));
  return { entry, env: { MATTE_MODELS: 'mean', MATTE_MODELS_FILE: file } };
}
