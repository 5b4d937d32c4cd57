// A tiny IS-Net-shaped fp16 model for the fp32 conversion's tests (models/convert-fp32.ts), built
// with onnx-proto: float input, Cast to fp16, a 1x1 Conv with fp16 weights (raw_data) and bias
// (int32_data, the other way ONNX stores fp16), a Constant fp16 offset, Sigmoid, Cast back to float.
// ONNX Runtime runs it on the CPU by casting around the fp16 nodes, as it runs img.ly's IS-Net.
import { getFloat16, setFloat16 } from '@petamoriken/float16';
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const FLOAT16 = onnx.TensorProto.DataType.FLOAT16;

/** fp16 bit patterns of values (round to nearest even). */
export function halfBits(values: number[]): number[] {
  const view = new DataView(new ArrayBuffer(2));
  return values.map((v) => {
    setFloat16(view, 0, v, true);
    return view.getUint16(0, true);
  });
}

/** The value an fp16 bit pattern stands for. */
export function halfValue(bits: number): number {
  const view = new DataView(new ArrayBuffer(2));
  view.setUint16(0, bits, true);
  return getFloat16(view, 0, true);
}

function halfRaw(values: number[]): Uint8Array {
  const bits = halfBits(values);
  const raw = new Uint8Array(bits.length * 2);
  bits.forEach((b, i) => {
    raw[2 * i] = b & 0xff;
    raw[2 * i + 1] = b >> 8;
  });
  return raw;
}

const tensorType = (elemType: number, dims: number[]) => ({
  tensorType: { elemType, shape: { dim: dims.map((dimValue) => ({ dimValue })) } },
});

export const TINY_WEIGHTS = [0.3, -0.7, 0.45];
export const TINY_BIAS = 0.2;
export const TINY_OFFSET = -0.1;

/**
 * input [1,3,H,W] float -> "matte" [1,1,H,W] float = sigmoid(conv1x1(x) + bias + offset), computed
 * between Casts to fp16. `extra` nodes are appended (to test refusals).
 */
export function tinyHalfModel(width: number, height: number, extra: InstanceType<typeof onnx.NodeProto>[] = []): Uint8Array {
  const int = (name: string, i: number) => ({ name, type: onnx.AttributeProto.AttributeType.INT, i });
  const ints = (name: string, values: number[]) => ({ name, type: onnx.AttributeProto.AttributeType.INTS, ints: values });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'matte-test',
    opsetImport: [{ domain: '', version: 15 }],
    graph: {
      name: 'tiny-fp16',
      node: [
        { opType: 'Cast', name: 'to_half', input: ['input'], output: ['x16'], attribute: [int('to', FLOAT16)] },
        { opType: 'Conv', name: 'conv', input: ['x16', 'weight', 'bias'], output: ['y16'], attribute: [ints('kernel_shape', [1, 1])] },
        { opType: 'Constant', name: 'offset', output: ['offset16'], attribute: [{ name: 'value', type: onnx.AttributeProto.AttributeType.TENSOR, t: { dataType: FLOAT16, dims: [], rawData: halfRaw([TINY_OFFSET]) } }] },
        { opType: 'Add', name: 'add', input: ['y16', 'offset16'], output: ['z16'] },
        { opType: 'Sigmoid', name: 'sigmoid', input: ['z16'], output: ['s16'] },
        { opType: 'Cast', name: 'to_float', input: ['s16'], output: ['matte'], attribute: [int('to', FLOAT)] },
        ...extra,
      ],
      initializer: [
        { name: 'weight', dataType: FLOAT16, dims: [1, 3, 1, 1], rawData: halfRaw(TINY_WEIGHTS) },
        { name: 'bias', dataType: FLOAT16, dims: [1], int32Data: halfBits([TINY_BIAS]) },
      ],
      input: [{ name: 'input', type: tensorType(FLOAT, [1, 3, height, width]) }],
      output: [{ name: 'matte', type: tensorType(FLOAT, [1, 1, height, width]) }],
      valueInfo: [{ name: 'y16', type: tensorType(FLOAT16, [1, 1, height, width]) }],
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

export { onnx };
