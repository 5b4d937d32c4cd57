// Loads the compiled addon (native/, built by cmake-js or node-gyp into build/Release).
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Step, OutputFormat } from './schema.js';

/** The plan handed to the addon: validated steps plus everything the native side needs. */
export interface NativePlan {
  steps: Step[];
  format: OutputFormat;
  quality: number;
  anim: boolean;
  maxPixels: number;
  maxFrames: number;
  maxMatteFrames: number;
}

export interface NativeResult {
  data: Buffer;
  width: number;
  /** Height of one frame. */
  height: number;
  frames: number;
}

export interface NativeModelSpec {
  path: string;
  inputWidth: number;
  inputHeight: number;
  /** x' = (x / divide - mean) / std per channel, x in 0..255; divide 0 means "the image's max". */
  divide: number;
  mean: [number, number, number];
  std: [number, number, number];
  /** Name of the output holding the matte. */
  output: string;
  /** `minmax`: rescale to 0..1 by the output's own min and max; `clamp`: clamp to 0..1. */
  postprocess: 'minmax' | 'clamp';
  threads: number;
}

/** An ONNX Runtime session held by the addon. Opaque to JS. */
export interface NativeModel {
  readonly __nativeModel: true;
}

export interface NativeInferenceResult {
  /** The matte, 8-bit, model input size. */
  data: Buffer;
  width: number;
  height: number;
}

export interface Addon {
  run(input: Buffer | string, plan: NativePlan, model: NativeModel | undefined): Promise<NativeResult>;
  loadModel(spec: NativeModelSpec): Promise<NativeModel>;
  /** The model alone on a normalised planar (1x3xHxW) tensor: the post-processed matte. */
  infer(model: NativeModel, chw: Float32Array): Promise<NativeInferenceResult>;
  configure(options: { vipsThreads: number }): void;
  versions(): { libvips: string; onnxruntime: string };
}

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('../../', import.meta.url));

function load(): Addon {
  const candidates = [`${root}build/Release/matte.node`, `${root}build/Debug/matte.node`];
  let lastError: unknown;
  for (const candidate of candidates) {
    try {
      return require(candidate) as Addon;
    } catch (err) {
      lastError = err;
      if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    }
  }
  throw new Error(`matte: the native addon is not built (run \`npm run build\`): ${String(lastError)}`);
}

export const addon: Addon = load();
