// Loads the compiled addon chosen by lib/platform.ts (prebuilt package, or a source build).
import { createRequire } from 'node:module';
import { addonCandidates, loadFailureMessage, missingAddonMessage } from './platform.js';
import { disableOnnxRuntimeTelemetry } from './telemetry.js';
import type { Step, OutputFormat, FormatChoice } from './schema.js';

/** The plan handed to the addon: validated steps plus everything the native side needs. */
export interface NativePlan {
  steps: Step[];
  /** auto: PNG where the result has an alpha below 255, else JPEG (the result's `format`). */
  format: FormatChoice;
  /** Not given: the format's default (DEFAULT_QUALITIES). */
  quality?: number;
  anim: boolean;
  maxPixels: number;
  maxFrames: number;
  maxMatteFrames: number;
  /** The job's time budget in milliseconds, counted from when it starts running; 0: none. */
  timeoutMs?: number;
  /**
   * The steps (removeBackground, a resize with gravity subject) whose matte is handed back in the
   * result once computed (`mattes`), each with the matte computed before (lib/matte-cache.ts), if
   * any: used instead of the model when its size is the one the step makes.
   */
  mattes?: { step: number; data?: Buffer; width?: number; height?: number }[];
  /** The encoded background image of a backgroundImage step (read in place for the whole job). */
  backgroundImage?: Buffer;
}

/** A rectangle of the result's pixels. */
export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** A job handle from createJob(): lets JS cancel the job it is passed to. Opaque to JS. */
export interface NativeJob {
  readonly __nativeJob: true;
}

export interface NativeResult {
  data: Buffer;
  width: number;
  /** Height of one frame. */
  height: number;
  frames: number;
  /** The format written (what `auto` became). */
  format: OutputFormat;
  /** The subject's box (alpha > 0 of the matte) in the result's pixels, when a removeBackground ran. */
  foreground?: Box;
  /** The mattes the steps listed in the plan's `mattes` computed (not when one used a given matte, or did not run). */
  mattes?: { step: number; data: Buffer; width: number; height: number }[];
  /** The steps that used the matte they were given. */
  mattesGiven?: number[];
}

export interface NativeModelSpec {
  path: string;
  inputWidth: number;
  inputHeight: number;
  /** x' = (x / divide - mean) / std per channel, x in 0..255; divide 0 means "the image's max". */
  divide: number;
  mean: [number, number, number];
  std: [number, number, number];
  /** Name of the output holding the matte; without one, the output at `outputIndex` (default the first). */
  output?: string;
  outputIndex?: number;
  /** `minmax`: rescale to 0..1 by the output's own min and max; `clamp`: clamp to 0..1; `sigmoid`: logistic, then clamp; `sigmoid_minmax`: logistic, then minmax. */
  postprocess: 'minmax' | 'clamp' | 'sigmoid' | 'sigmoid_minmax';
}

/** A whole number's range and its value when none is given. */
export interface NativeBound {
  min: number;
  max: number;
  default: number;
}

/** The bounds a job is held to, as the addon checks them (native/bounds.h). */
export interface NativeBounds {
  maxResizeSide: number;
  maxBlurRadius: number;
  maxToneFactor: number;
  maxTrimMarginPixels: number;
  maxTrimMarginPercent: number;
  minMegapixels: number;
  maxMegapixels: number;
  maxShadowBlur: number;
  maxShadowOffset: number;
  minPlaceScale: number;
  maxPlaceScale: number;
  maxPlaceMarginPixels: number;
  maxPlaceMarginPercent: number;
  maxAspectTerm: number;
  maxRoiPixels: number;
  minDpr: number;
  maxDpr: number;
  maxSharpenSigma: number;
  maxSharpenAmount: number;
  defaultSharpenFlat: number;
  defaultSharpenJagged: number;
  minGamma: number;
  maxGamma: number;
  maxEdgePixels: number;
  /** The quality's range, and jpeg's and webp's default. */
  quality: NativeBound;
  /** AVIF's default quality. */
  avifQuality: number;
  limits: { maxPixels: NativeBound; maxFrames: NativeBound; maxMatteFrames: NativeBound };
  decodedBytesPerPixel: number;
}

/** An ONNX Runtime session held by the addon. Opaque to JS. */
export interface NativeModel {
  readonly __nativeModel: true;
}

export interface Addon {
  run(input: Buffer | string, plan: NativePlan, model: NativeModel | undefined, job?: NativeJob): Promise<NativeResult>;
  createJob(): NativeJob;
  /** Stops the job (job_timeout/aborted rejection follows); false when it had not started yet (it never will). */
  cancel(job: NativeJob): boolean;
  loadModel(spec: NativeModelSpec): Promise<NativeModel>;
  /** libvips' worker threads (global); ONNX Runtime's pool size (only before the first model loads). */
  configure(options: { vipsThreads?: number; onnxThreads?: number }): void;
  /** The bounds lib/schema.ts and lib/limits.ts validate with: the addon's own (native/bounds.h). */
  readonly bounds: NativeBounds;
  /** Opens ONNX Runtime if no model has yet (native/matte/onnxruntime.h; docs/architecture.md, "What a process loads at start"). */
  versions(): { libvips: string; onnxruntime: string };
}

const require = createRequire(import.meta.url);

// The first candidate that exists is the one used (lib/platform.ts): a candidate that fails to load
// is an error about this system (libvips missing or too old), not a reason to try another build.
function load(): Addon {
  const [first] = addonCandidates();
  if (!first) throw new Error(missingAddonMessage());
  disableOnnxRuntimeTelemetry();
  try {
    return require(first.path) as Addon;
  } catch (err) {
    throw new Error(loadFailureMessage(first.path, first.from, err), { cause: err });
  }
}

export const addon: Addon = load();
