// ONNX graphs shaped like each model family's published file, built with onnx-proto: one float
// input [1, 3, H, W] and several float outputs [1, 1, H, W], the first being the matte (rembg's
// sessions read ort_outs[0]). The first output is the input's red plane as the network received
// it, the others decoys (the green and blue planes): a test can then check the normalisation and
// the post-process numerically, and that the first output is the one used.
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;

function tensorType(shape: number[]) {
  return { tensorType: { elemType: FLOAT, shape: { dim: shape.map((d) => ({ dimValue: d })) } } };
}

function int64s(name: string, values: number[]) {
  return { name, dataType: onnx.TensorProto.DataType.INT64, dims: [values.length], int64Data: values };
}

/** The graph: `outputs[i]` is input plane i (i < 3). */
export function planesModel(size: number, names: { input: string; outputs: string[] }): Uint8Array {
  const nodes = names.outputs.map((output, i) => ({
    opType: 'Slice',
    name: `plane_${i}`,
    input: [names.input, `start_${i}`, `end_${i}`, 'axis'],
    output: [output],
  }));
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'matte-test',
    opsetImport: [{ domain: '', version: 13 }],
    graph: {
      name: 'planes',
      node: nodes,
      initializer: [int64s('axis', [1]), ...names.outputs.flatMap((_, i) => [int64s(`start_${i}`, [i % 3]), int64s(`end_${i}`, [(i % 3) + 1])])],
      input: [{ name: names.input, type: tensorType([1, 3, size, size]) }],
      output: names.outputs.map((name) => ({ name, type: tensorType([1, 1, size, size]) })),
    },
  });
  return onnx.ModelProto.encode(model).finish();
}
