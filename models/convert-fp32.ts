// Rewrites an ONNX model whose weights are float16 into the same network in float32, at fetch time
// (models/fetch.ts, for registry entries with `"convert": "fp32"`).
//
// Why: ONNX Runtime's CPU provider has no float16 Conv on x86, so an fp16 model (img.ly's IS-Net)
// runs with a Cast before and after every node and its weights are widened to fp32 at every load
// anyway (peak RSS and CPU; bench/README.md, "Memory: IS-Net and animations"). Widening once, on
// disk, gives the same fp32 arithmetic ONNX Runtime did, without the casts: every fp16 tensor
// (initializers, Constant values, tensor attributes) becomes fp32 (exact: fp16 -> fp32 loses
// nothing), every `Cast(to=FLOAT16)` becomes `Cast(to=FLOAT)` (a no-op ONNX Runtime removes), and
// every declared fp16 type (graph inputs, outputs, value_info) becomes fp32.
//
// The rewrite is deterministic (same input bytes, same output bytes: the registry pins the result's
// sha256). Anything it cannot convert faithfully is refused with an error, never half converted:
// sparse or external tensors in fp16, model-local functions, and ops whose `dtype` attribute asks
// for fp16 (their output type would stay fp16).
import { getFloat16 } from '@petamoriken/float16';
import onnxProto from 'onnx-proto';
import type { onnx as OnnxTypes } from 'onnx-proto';

const { onnx } = onnxProto;

/** onnx.TensorProto.DataType */
const FLOAT = 1;
const FLOAT16 = 10;
/** onnx.AttributeProto.AttributeType */
const ATTR_INT = 2;

/** fp16 bit pattern -> fp32 value, for all 65536 patterns (NaN payloads, infinities and subnormals included). */
let table: Float32Array | undefined;
function halfTable(): Float32Array {
  if (!table) {
    table = new Float32Array(65536);
    const view = new DataView(new ArrayBuffer(2));
    for (let bits = 0; bits < 65536; bits++) {
      view.setUint16(0, bits, true);
      table[bits] = getFloat16(view, 0, true);
    }
  }
  return table;
}

/** Little-endian fp16 values (ONNX raw_data order) widened to little-endian fp32 bytes. */
export function float16BytesToFloat32(bytes: Uint8Array): Uint8Array {
  if (bytes.length % 2) throw new Error(`float16 data of ${bytes.length} bytes is not a whole number of values`);
  const half = halfTable();
  const count = bytes.length / 2;
  const out = new Float32Array(count);
  // Read the 16-bit patterns byte by byte: raw_data is a view into the file at any alignment.
  for (let i = 0; i < count; i++) out[i] = half[bytes[2 * i]! | (bytes[2 * i + 1]! << 8)]!;
  if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error('big-endian hosts are not supported');
  return new Uint8Array(out.buffer);
}

export interface ConversionSummary {
  /** fp16 tensors widened (initializers, Constant values, tensor attributes). */
  tensors: number;
  /** Cast nodes whose target was float16. */
  casts: number;
  /** Declared types (inputs, outputs, value_info) changed from float16. */
  types: number;
}

type Tensor = OnnxTypes.ITensorProto;
type Graph = OnnxTypes.IGraphProto;
type TypeProto = OnnxTypes.ITypeProto;

function convertTensor(tensor: Tensor, where: string, summary: ConversionSummary): void {
  if (tensor.dataType !== FLOAT16) return;
  if (tensor.dataLocation === onnx.TensorProto.DataLocation.EXTERNAL || tensor.externalData?.length) {
    throw new Error(`${where}: float16 tensor "${tensor.name}" has external data, which this conversion does not read`);
  }
  let half: Uint8Array;
  if (tensor.rawData?.length) {
    half = tensor.rawData;
  } else {
    // Without raw_data, ONNX keeps float16 values as their bit patterns in int32_data.
    const values = tensor.int32Data ?? [];
    const bytes = new Uint8Array(values.length * 2);
    values.forEach((v: number, i: number) => {
      bytes[2 * i] = v & 0xff;
      bytes[2 * i + 1] = (v >> 8) & 0xff;
    });
    half = bytes;
  }
  tensor.rawData = float16BytesToFloat32(half);
  tensor.int32Data = [];
  tensor.dataType = FLOAT;
  summary.tensors++;
}

function convertType(type: TypeProto | null | undefined, summary: ConversionSummary): void {
  if (!type) return;
  for (const inner of [type.tensorType, type.sparseTensorType]) {
    if (inner?.elemType === FLOAT16) {
      inner.elemType = FLOAT;
      summary.types++;
    }
  }
  convertType(type.sequenceType?.elemType, summary);
  convertType(type.optionalType?.elemType, summary);
  convertType(type.mapType?.valueType, summary);
}

function convertGraph(graph: Graph, summary: ConversionSummary): void {
  const where = `graph "${graph.name}"`;
  for (const tensor of graph.initializer ?? []) convertTensor(tensor, where, summary);
  for (const sparse of graph.sparseInitializer ?? []) {
    if (sparse.values?.dataType === FLOAT16) throw new Error(`${where}: float16 sparse initializers are not supported`);
  }
  for (const info of [...(graph.input ?? []), ...(graph.output ?? []), ...(graph.valueInfo ?? [])]) convertType(info.type, summary);
  for (const node of graph.node ?? []) {
    const name = `${where}, node "${node.name}" (${node.opType})`;
    for (const attribute of node.attribute ?? []) {
      if (attribute.t) convertTensor(attribute.t, name, summary);
      for (const tensor of attribute.tensors ?? []) convertTensor(tensor, name, summary);
      if (attribute.sparseTensor?.values?.dataType === FLOAT16) throw new Error(`${name}: float16 sparse attributes are not supported`);
      if (attribute.g) convertGraph(attribute.g, summary);
      for (const sub of attribute.graphs ?? []) convertGraph(sub, summary);
      if (attribute.tp) convertType(attribute.tp, summary);
      for (const type of attribute.typeProtos ?? []) convertType(type, summary);
      const isInt = attribute.type === ATTR_INT;
      if (isInt && Number(attribute.i) === FLOAT16) {
        if (!node.domain && node.opType === 'Cast' && attribute.name === 'to') {
          attribute.i = FLOAT;
          summary.casts++;
        } else if (attribute.name === 'to' || attribute.name === 'dtype') {
          throw new Error(`${name}: attribute "${attribute.name}" asks for float16, which this conversion does not rewrite`);
        }
      }
    }
  }
}

/**
 * The fp32 form of an ONNX model with fp16 weights, as the bytes of a new model file, and what
 * was changed. Throws (before anything is written) on bytes that are not an ONNX model or on
 * constructs it does not convert.
 */
export function convertModelToFloat32(bytes: Uint8Array): { bytes: Uint8Array; summary: ConversionSummary } {
  let model: OnnxTypes.ModelProto;
  try {
    model = onnx.ModelProto.decode(bytes);
  } catch (err) {
    throw new Error(`not an ONNX model (${err instanceof Error ? err.message : err})`);
  }
  if (!model.graph || !model.graph.node?.length) throw new Error('not an ONNX model: it has no graph');
  if (model.functions?.length) throw new Error('models with local functions are not supported');
  const summary: ConversionSummary = { tensors: 0, casts: 0, types: 0 };
  convertGraph(model.graph, summary);
  if (!summary.tensors && !summary.casts && !summary.types) throw new Error('the model has no float16 tensors or types to convert');
  return { bytes: onnx.ModelProto.encode(model).finish(), summary };
}
