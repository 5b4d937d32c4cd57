// matte's public library API: edit an image with an ordered list of operations, or remove its
// background, in one native call. Usable without the server, e.g. embedded in another Node service.
//
//   import { edit, removeBackground } from 'matte';
//   const { data, width, height } = await edit(jpegBuffer, [{ resize: { width: 800 } }, { blur: 2 }], { format: 'webp' });
import { readFile } from 'node:fs/promises';
import { addon, type Box, type NativePlan, type NativeResult } from './native.js';
import { copyInput, type InputCopy } from './input-copy.js';
import { MatteError, fromNativeError } from './errors.js';
import { jobTimeoutMs, runCancellable, withCores, type JobControl } from './job.js';
import {
  MEDIA_TYPES,
  editOptionsSchema,
  parseOperations,
  parseTrimMargin,
  removeBackgroundOptionsSchema,
  removeBackgroundStep,
  removeBackgroundTail,
  type Channels,
  type FormatChoice,
  type Operation,
  type OutputFormat,
  type RemoveBackgroundFormat,
  type Step,
} from './schema.js';
import { placeStep, shadowStep, sizeStep, megapixelsOf, type PlaceValue, type RoiValue, type ShadowValue, type SizeValue } from './staging.js';
import { parseColor } from './color.js';
import { modelFor } from './models.js';
import { scaledTimeoutMs } from './model-cost.js';
import { resolveLimits, type Limits } from './limits.js';
import { MATTE_VERSION } from './version.js';
import { checkMatteCache, jobModelName, lookUpMatte, lookupDeadlineMs, matteKey, matteSteps, reportMatte, storeMatte, type MatteCache, type MatteLookup } from './matte-cache.js';

export * from './schema.js';
export * from './staging.js';
export * from './responsive.js';
export type { Box } from './native.js';
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
  /** Output format, default png; `auto`: png where the result has an alpha below 255, else jpeg (Result.format says which). */
  format?: FormatChoice;
  /** 1..100, for jpeg, webp and avif (default: the format's, DEFAULT_QUALITIES); validated and ignored for png and gif. */
  quality?: number;
  /** Keep every frame of an animated gif/webp input (default true) when the format can animate. */
  anim?: boolean;
  limits?: Partial<Limits>;
  /** Where a removeBackground operation's matte is kept and found again (see MatteCache); none by default. */
  matteCache?: MatteCache;
  /** The image a backgroundImage operation puts the image over (an encoded image or a path; read, like the input, with the same limits). */
  backgroundImage?: Input;
}

export interface RemoveBackgroundOptions extends JobControl, InputOptions {
  /** png (default), webp, jpeg (flattened on white unless over a background), or auto: png where the result has an alpha below 255, else jpeg. */
  format?: RemoveBackgroundFormat;
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
  // The staging (docs/api.md, "Extensions: staged cut-outs"), applied after the cut-out and trim: shadow, place, background.
  /** A cap on the result's size: preview (0.25 MP), medium (1.5), hd (4), full, auto, or { megapixels }; the input is decoded no larger than needed. */
  size?: SizeValue;
  /** [x1, y1, x2, y2] in the input's pixels or as percentages ('25%'): only what lies inside can be foreground. */
  roi?: RoiValue;
  /** false: a hard matte (0 or 255, its edge antialiased by one pixel); default true. */
  semitransparency?: boolean;
  /** The subject scaled and placed: { scale?, position?, aspectRatio?, margin? }. */
  place?: PlaceValue;
  /** A shadow under the subject: true (a drop shadow), or { type?, opacity?, blur?, offsetX?, offsetY?, color? }. */
  shadow?: ShadowValue;
  /** A CSS colour under the result (not with backgroundImage). */
  background?: string;
  /** An image under the result, covered and centred (not with background). */
  backgroundImage?: Input;
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
  /** The subject's box (alpha > 0 of the matte) in the result's pixels, after every later step, when the job removed a background. */
  foreground?: Box;
}

// ---- concurrency: lib/job.ts ----------------------------------------------------------------

export { configure, threadsPerJob, type ThreadOptions } from './job.js';

// ---- jobs ---------------------------------------------------------------------------------------

async function toBuffer(input: Input, handOver: boolean | undefined, copies: InputCopy[], path?: string): Promise<Buffer> {
  if (typeof input === 'string') {
    try {
      return await readFile(input);
    } catch (err) {
      throw new MatteError('invalid_input', `cannot read ${input}: ${(err as NodeJS.ErrnoException).code ?? err}`, path);
    }
  }
  // Copied, synchronously, when the job is started: the worker thread reads the bytes for the
  // whole job, and the caller may overwrite, reuse or transfer (detach) its buffer meanwhile.
  // A Buffer handed over (InputOptions) is read in place.
  if (input instanceof Uint8Array) {
    if (handOver === true && Buffer.isBuffer(input)) return input;
    const copy = copyInput(input);
    copies.push(copy);
    return copy.bytes;
  }
  throw new MatteError('invalid_input', `${path ?? 'input'} must be a Buffer, a Uint8Array or a file path`, path);
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

/** What a job runs on besides its steps. */
interface JobSettings {
  format: FormatChoice;
  /** undefined: the format's default. */
  quality?: number;
  anim: boolean;
  limits?: Partial<Limits>;
  matteCache?: MatteCache;
  backgroundImage?: Input;
}

/** A backgroundImage operation and the background image come together (lib's names; the server checks its own field first). */
function checkBackgroundImage(steps: Step[], given: boolean): void {
  const index = steps.findIndex((s) => s.op === 'backgroundImage');
  if (index >= 0 && !given) {
    throw new MatteError('invalid_operations', `operations[${index}].backgroundImage needs a background image (the backgroundImage option)`, `operations[${index}].backgroundImage`);
  }
  if (index < 0 && given) throw new MatteError('invalid_option', 'backgroundImage: is given, but no backgroundImage operation uses it', 'backgroundImage');
}

async function runSteps(input: Input, steps: Step[], settings: JobSettings, control: JobControl & InputOptions): Promise<Result> {
  const given = jobTimeoutMs(control);
  checkMatteCache(settings.matteCache);
  const resolved = resolveLimits(settings.limits);
  checkBackgroundImage(steps, settings.backgroundImage !== undefined);
  // The input's copies go back to their pool once the native job has settled (or, if it never
  // started, at once).
  const copies: InputCopy[] = [];
  const native: { run?: Promise<NativeResult> } = {};
  const track = (run: Promise<NativeResult>) => (native.run = run);
  try {
    const buffer = await toBuffer(input, control.handOver, copies);
    const background = settings.backgroundImage === undefined ? undefined : await toBuffer(settings.backgroundImage, control.handOver, copies, 'backgroundImage');
    const matting = matteSteps(steps);
    const model = matting.length > 0 ? await modelFor(jobModelName(steps)) : undefined;
    // A large model's job gets its cost class's multiple of the budget (lib/model-cost.ts).
    let timeoutMs = scaledTimeoutMs(given, model);
    // The addon hands a removeBackground's matte over only where the step runs on one frame (a still
    // image, or an animation's first frame alone), and a subject's always (the first frame's): that
    // frame is the same whatever the output, so not in the key. What comes after the step (the
    // staging included) is not in the key either.
    const cache = model ? settings.matteCache : undefined;
    let lookups: MatteLookup[] = [];
    if (cache) {
      // The lookups are part of the job: within their deadline, stopped by the job's signal, and
      // their time taken from the job's budget.
      const started = Date.now();
      const lookupControl = { deadlineMs: lookupDeadlineMs(timeoutMs), signal: control.signal };
      lookups = await Promise.all(matting.map((index) => lookUpMatte(cache, matteKey(buffer, steps, index, model!), resolved.maxPixels, lookupControl)));
      if (timeoutMs > 0) timeoutMs = Math.max(1, timeoutMs - (Date.now() - started));
    }
    const plan: NativePlan = {
      steps,
      format: settings.format,
      ...(settings.quality === undefined ? {} : { quality: settings.quality }),
      anim: settings.anim,
      ...resolved,
      timeoutMs,
      ...(cache ? { mattes: matting.map((step, i) => ({ step, ...lookups[i]!.given })) } : {}),
      ...(background ? { backgroundImage: background } : {}),
    };
    const { mattes, mattesGiven, ...out } = await runCancellable((job) => withCores(() => track(addon.run(buffer, plan, model?.handle, job))), control.signal);
    if (cache) {
      matting.forEach((step, i) => {
        const lookup = lookups[i]!;
        const matte = mattes?.find((m) => m.step === step);
        // A given matte not used: of another size (bad, recomputed and replaced below), or a job on several frames.
        if (lookup.given) reportMatte(cache, mattesGiven?.includes(step) ? 'hit' : matte ? 'bad' : 'miss');
        if (matte) storeMatte(cache, lookup.key, matte);
      });
    }
    return { ...out, mediaType: MEDIA_TYPES[out.format] };
  } finally {
    const release = () => copies.forEach((copy) => copy.release());
    if (native.run) native.run.then(release, release);
    else release();
  }
}

/**
 * Applies an ordered list of 1..20 operations (docs/api.md, "Operations (edit)") to an image and encodes the
 * result. `operations` is validated with the shared schema; errors are MatteError
 * `invalid_operations` with a `path` such as `operations[2].blur`.
 */
export async function edit(input: Input, operations: Operation[] | unknown, options: EditOptions = {}): Promise<Result> {
  const { limits, timeout, signal, matteCache, handOver, backgroundImage, ...rest } = options;
  const opts = checkOptions<{ format?: FormatChoice; quality?: number; anim?: boolean }>(editOptionsSchema, rest);
  const steps = parseOperations(operations);
  return editSteps(input, steps, { ...opts, limits, timeout, signal, matteCache, handOver, backgroundImage });
}

/** Like edit(), for steps that were already validated (e.g. by parseOperationsJson in the server). */
export function editSteps(input: Input, steps: Step[], options: EditOptions = {}): Promise<Result> {
  const { format = 'png', quality, anim = true, limits, matteCache, backgroundImage } = options;
  return runSteps(input, steps, { format, quality, anim, limits, matteCache, backgroundImage }, options);
}

/**
 * Removes the background (docs/api.md, "Routes"): the model's matte becomes the alpha band; with
 * `trim`, the result is cropped to the bounding box of the pixels with alpha > 0.
 */
export async function removeBackground(input: Input, options: RemoveBackgroundOptions = {}): Promise<Result> {
  const { limits, timeout, signal, matteCache, handOver, backgroundImage, ...rest } = options;
  const opts = checkOptions<Omit<RemoveBackgroundOptions, 'limits' | 'timeout' | 'signal' | 'matteCache' | 'handOver' | 'backgroundImage'>>(removeBackgroundOptionsSchema, rest);
  let margin;
  if (opts.trimMargin !== undefined) {
    margin = parseTrimMargin(opts.trimMargin);
    if (typeof margin === 'string') throw new MatteError('invalid_option', `trimMargin: ${margin}`, 'trimMargin');
    if (!opts.trim) throw new MatteError('invalid_option', 'trimMargin: needs trim: true (the margin is around the trimmed subject)', 'trimMargin');
  }
  const steps = removeBackgroundSteps({ ...opts, backgroundImage: backgroundImage !== undefined }, margin);
  try {
    return await runSteps(input, steps.list, { format: opts.format ?? 'png', anim: opts.anim ?? true, limits, matteCache, backgroundImage }, { timeout, signal, handOver });
  } catch (err) {
    throw steps.renamed(err);
  }
}

type StagingOptions = Pick<RemoveBackgroundOptions, 'refine' | 'tta' | 'model' | 'roi' | 'semitransparency' | 'size' | 'place' | 'shadow' | 'background' | 'trim' | 'channels'> & { backgroundImage: boolean };

/**
 * The steps of a background removal with its staging: [size] removeBackground [trim] [shadow]
 * [place] [background | backgroundImage] [the mask] [size again, when a step after the cut-out
 * may have grown the canvas]. An error at one of them names the option it came from.
 */
export function removeBackgroundSteps(opts: StagingOptions, margin?: ReturnType<typeof parseTrimMargin>): { list: Step[]; renamed(err: unknown): unknown } {
  const channels = opts.channels ?? 'rgba';
  if (opts.background !== undefined && opts.backgroundImage) throw new MatteError('invalid_option', 'backgroundImage: give background or backgroundImage, not both', 'backgroundImage');
  for (const name of ['shadow', 'background', 'backgroundImage'] as const) {
    if (channels === 'alpha' && opts[name]) throw new MatteError('invalid_option', `${name}: cannot be used with channels: 'alpha' (the matte alone)`, name);
  }
  const names: string[] = [];
  const list: Step[] = [];
  const add = (step: Step, name: string) => {
    list.push(step);
    names.push(name);
  };
  const capped = opts.size !== undefined && megapixelsOf(opts.size) !== undefined;
  if (capped) add(sizeStep(opts.size!), 'size');
  const { refine, tta, model, roi, semitransparency } = opts;
  // The region is in the input's pixels, whatever size the cap decoded it at.
  add({ ...removeBackgroundStep({ refine, tta, model, roi, semitransparency }), ...(roi ? { roiOfInput: true } : {}) }, 'removeBackground');
  for (const step of removeBackgroundTail(Boolean(opts.trim), typeof margin === 'object' ? margin : undefined, 'rgba')) add(step, 'trimMargin');
  // The shadow before place: place then scales and pads the subject with its shadow, so the aspect
  // ratio it pads to holds (a shadow after it would grow the canvas again).
  if (opts.shadow) add(shadowStep(opts.shadow), 'shadow');
  if (opts.place) add(placeStep(opts.place), 'place');
  if (opts.background !== undefined) add({ op: 'background', rgba: parseColor(opts.background)! }, 'background');
  if (opts.backgroundImage) add({ op: 'backgroundImage' }, 'backgroundImage');
  if (channels === 'alpha') add({ op: 'extractAlpha' }, 'channels');
  if (capped && list.some((s) => s.op === 'shadow' || s.op === 'place' || s.op === 'trimTransparent')) add(sizeStep(opts.size!), 'size');
  return {
    list,
    renamed(err: unknown): unknown {
      const error = fromNativeError(err);
      const match = /^operations\[(\d+)\](\.[\w.]+)?/.exec(error.path ?? '');
      if (!match) return error;
      let name = names[Number(match[1])] ?? 'options';
      // removeBackground's settings are options of their own (roi, model, ...).
      if (name === 'removeBackground') name = match[2]?.split('.').pop() || 'options';
      return new MatteError(error.code, error.message.replace(match[0], name), name);
    },
  };
}

/** Versions of matte and of the native libraries it runs on. */
export function versions(): { matte: string; libvips: string; onnxruntime: string } {
  return { matte: MATTE_VERSION, ...addon.versions() };
}
