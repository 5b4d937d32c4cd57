// matte's public library API: edit an image with an ordered list of operations, or remove its
// background, in one native call. Usable without the server, e.g. embedded in another Node service.
//
//   import { edit, removeBackground } from 'matte';
//   const { data, width, height } = await edit(jpegBuffer, [{ resize: { width: 800 } }, { blur: 2 }], { format: 'webp' });
import { readFile } from 'node:fs/promises';
import { addon, type NativePlan } from './native.js';
import { MatteError } from './errors.js';
import { jobTimeoutMs, runCancellable, withCores, type JobControl } from './job.js';
import {
  DEFAULT_QUALITY,
  MEDIA_TYPES,
  editOptionsSchema,
  parseOperations,
  parseTrimMargin,
  removeBackgroundOptionsSchema,
  removeBackgroundTail,
  type Channels,
  type MatteFormat,
  type Operation,
  type OutputFormat,
  type Step,
} from './schema.js';
import { modelFor } from './models.js';
import { scaledTimeoutMs } from './model-cost.js';
import { resolveLimits, type Limits } from './limits.js';
import { MATTE_VERSION } from './version.js';
import { checkMatteCache, lookUpMatte, lookupDeadlineMs, matteKey, reportMatte, storeMatte, type MatteCache } from './matte-cache.js';

export * from './schema.js';
export { MatteError, type MatteErrorCode } from './errors.js';
export { parseColor, type Rgba } from './color.js';
export { COST_CLASSES, type CostClass } from './model-cost.js';
export { loadModel, loadedModelNames, modelRegistry, POSTPROCESSES, type ModelEntry, type LoadedModel, type LoadOptions } from './models.js';
export { MATTE_VERSION } from './version.js';
export { DEFAULT_JOB_TIMEOUT_SECONDS, type JobControl } from './job.js';
export { signUrl, type SignedOptions, type SignUrlSettings } from './signed-url.js';
export { type MatteCache, type MatteCacheOutcome } from './matte-cache.js';

/** An encoded image in memory, or the path of an image file. */
export type Input = Buffer | Uint8Array | string;

export { DEFAULT_LIMITS, LIMIT_BOUNDS, DECODED_BYTES_PER_PIXEL, type Limits } from './limits.js';

/** How the input is given. */
export interface InputOptions {
  /**
   * Hand the input Buffer over (default false): matte reads it in place for the whole job instead of
   * copying it when the call is made. The caller promises never to write to, reuse or transfer it
   * again; the server hands over each upload and fetched URL body, which nothing else holds.
   */
  handOver?: boolean;
}

export interface EditOptions extends JobControl, InputOptions {
  /** Output format, default png. */
  format?: OutputFormat;
  /** 1..100, for jpeg and webp (default 80); validated and ignored for the other formats. */
  quality?: number;
  /** Keep every frame of an animated gif/webp input (default true) when the format can animate. */
  anim?: boolean;
  limits?: Partial<Limits>;
  /** Where a removeBackground operation's matte is kept and found again (see MatteCache); none by default. */
  matteCache?: MatteCache;
}

export interface RemoveBackgroundOptions extends JobControl, InputOptions {
  /** png (default) or webp. */
  format?: MatteFormat;
  /** Crop to the bounding box of the pixels with alpha > 0 (default false). */
  trim?: boolean;
  /**
   * With `trim`, a margin around the subject's box: pixels a side (`30`, at most 500), or a share
   * of the box (`'10%'`, at most 50%: of its width left and right, of its height above and below).
   * Past the image's edge the canvas grows with transparent pixels.
   */
  trimMargin?: number | string;
  /** `rgba` (default): the cut-out; `alpha`: the matte alone, an 8-bit greyscale image (docs/api.md). */
  channels?: Channels;
  anim?: boolean;
  /** Refine the matte at full resolution, guided by the image, and clean it (default true); false: the model's matte alone. */
  refine?: boolean;
  /** A model's name (default: the last loadModel's, else MATTE_MODEL / MATTE_MODELS / the registry default); loaded on first use. */
  model?: string;
  /** Test-time augmentation: average the mattes of the image and of its mirror (default false; about twice the inference time). */
  tta?: boolean;
  limits?: Partial<Limits>;
  /** Where the matte is kept and found again: a second call for the same image skips the model (see MatteCache). */
  matteCache?: MatteCache;
}

export interface Result {
  /** The encoded image. */
  data: Buffer;
  format: OutputFormat;
  /** The media type of `data`, e.g. image/png. */
  mediaType: string;
  width: number;
  /** Height of one frame. */
  height: number;
  frames: number;
}

// ---- concurrency: lib/job.ts ----------------------------------------------------------------

export { configure, threadsPerJob, type ThreadOptions } from './job.js';

// ---- jobs ---------------------------------------------------------------------------------------

async function toBuffer(input: Input, handOver: boolean | undefined): Promise<Buffer> {
  if (typeof input === 'string') {
    try {
      return await readFile(input);
    } catch (err) {
      throw new MatteError('invalid_input', `cannot read ${input}: ${(err as NodeJS.ErrnoException).code ?? err}`);
    }
  }
  // Copied, synchronously, when the job is started: the worker thread reads the bytes for the
  // whole job, and the caller may overwrite, reuse or transfer (detach) its buffer meanwhile.
  // A Buffer handed over (InputOptions) is read in place.
  if (input instanceof Uint8Array) return handOver === true && Buffer.isBuffer(input) ? input : Buffer.copyBytesFrom(input);
  throw new MatteError('invalid_input', 'input must be a Buffer, a Uint8Array or a file path');
}

function checkOptions<T>(schema: { safeParse(v: unknown): { success: boolean; data?: T; error?: any } }, options: unknown): T {
  const result = schema.safeParse(options);
  if (!result.success) {
    const issue = result.error.issues[0];
    const path = issue.path.join('.');
    throw new MatteError('invalid_option', `${path || 'options'}: ${issue.message}`, path || undefined);
  }
  return result.data as T;
}

async function runSteps(input: Input, steps: Step[], format: OutputFormat, quality: number, anim: boolean, limits: Partial<Limits> | undefined, control: JobControl & InputOptions, matteCache?: MatteCache): Promise<Result> {
  const given = jobTimeoutMs(control);
  checkMatteCache(matteCache);
  const resolved = resolveLimits(limits);
  const buffer = await toBuffer(input, control.handOver);
  const index = steps.findIndex((s) => s.op === 'removeBackground');
  const model = index >= 0 ? await modelFor((steps[index] as { model?: string }).model) : undefined;
  // A large model's job gets its cost class's multiple of the budget (lib/model-cost.ts).
  let timeoutMs = scaledTimeoutMs(given, model);
  // The addon hands a matte over only where the step runs on one frame (a still image, or an
  // animation's first frame alone): that frame is the same whatever the output, so not in the key.
  const cache = model ? matteCache : undefined;
  let lookup;
  if (cache) {
    // The lookup is part of the job: within its deadline, stopped by the job's signal, and its
    // time taken from the job's budget.
    const started = Date.now();
    lookup = await lookUpMatte(cache, matteKey(buffer, steps, index, model!), resolved.maxPixels, { deadlineMs: lookupDeadlineMs(timeoutMs), signal: control.signal });
    if (timeoutMs > 0) timeoutMs = Math.max(1, timeoutMs - (Date.now() - started));
  }
  const plan: NativePlan = {
    steps,
    format,
    quality,
    anim,
    ...resolved,
    timeoutMs,
    ...(lookup ? { matte: lookup.given, handBackMatte: true } : {}),
  };
  const { matte, matteGiven, ...out } = await runCancellable((job) => withCores(() => addon.run(buffer, plan, model?.handle, job)), control.signal);
  if (cache && lookup) {
    // A given matte not used: of another size (bad, recomputed and replaced below), or a job on several frames.
    if (lookup.given) reportMatte(cache, matteGiven ? 'hit' : matte ? 'bad' : 'miss');
    if (matte) storeMatte(cache, lookup.key, matte);
  }
  return { ...out, format, mediaType: MEDIA_TYPES[format] };
}

/**
 * Applies an ordered list of 1..20 operations (docs/api.md, "Operations (edit)") to an image and encodes the
 * result. `operations` is validated with the shared schema; errors are MatteError
 * `invalid_operations` with a `path` such as `operations[2].blur`.
 */
export async function edit(input: Input, operations: Operation[] | unknown, options: EditOptions = {}): Promise<Result> {
  const { limits, timeout, signal, matteCache, handOver, ...rest } = options;
  const opts = checkOptions<{ format?: OutputFormat; quality?: number; anim?: boolean }>(editOptionsSchema, rest);
  const steps = parseOperations(operations);
  return editSteps(input, steps, { ...opts, limits, timeout, signal, matteCache, handOver });
}

/** Like edit(), for steps that were already validated (e.g. by parseOperationsJson in the server). */
export function editSteps(input: Input, steps: Step[], options: EditOptions = {}): Promise<Result> {
  return runSteps(input, steps, options.format ?? 'png', options.quality ?? DEFAULT_QUALITY, options.anim ?? true, options.limits, options, options.matteCache);
}

/**
 * Removes the background (docs/api.md, "Routes"): the model's matte becomes the alpha band; with
 * `trim`, the result is cropped to the bounding box of the pixels with alpha > 0.
 */
export async function removeBackground(input: Input, options: RemoveBackgroundOptions = {}): Promise<Result> {
  const { limits, timeout, signal, matteCache, handOver, ...rest } = options;
  const opts = checkOptions<{ format?: MatteFormat; trim?: boolean; trimMargin?: number | string; channels?: Channels; anim?: boolean; refine?: boolean; model?: string; tta?: boolean }>(
    removeBackgroundOptionsSchema,
    rest,
  );
  const { refine, tta, model } = opts;
  let margin;
  if (opts.trimMargin !== undefined) {
    margin = parseTrimMargin(opts.trimMargin);
    if (typeof margin === 'string') throw new MatteError('invalid_option', `trimMargin: ${margin}`, 'trimMargin');
    if (!opts.trim) throw new MatteError('invalid_option', 'trimMargin: needs trim: true (the margin is around the trimmed subject)', 'trimMargin');
  }
  const steps: Step[] = [{ op: 'removeBackground', refine, tta, model }, ...removeBackgroundTail(Boolean(opts.trim), margin, opts.channels ?? 'rgba')];
  return runSteps(input, steps, opts.format ?? 'png', DEFAULT_QUALITY, opts.anim ?? true, limits, { timeout, signal, handOver }, matteCache);
}

/** Versions of matte and of the native libraries it runs on. */
export function versions(): { matte: string; libvips: string; onnxruntime: string } {
  return { matte: MATTE_VERSION, ...addon.versions() };
}
