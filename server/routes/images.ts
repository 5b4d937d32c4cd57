// What both image endpoints share: the optional form fields, the input (upload or URL), running
// the job (runJob, from server/jobs.ts), and answering in `raw` or `url` mode.
import type { Context } from 'koa';
import { MatteError, OUTPUT_MODES, parseEnumField, type OutputMode, type Result, type Step } from '../../lib/index.js';
import { HttpError } from '../errors.js';
import { storeError } from '../store/errors.js';
import { fetchInputUrl, parseInputUrl } from '../input/fetch.js';
import { readForm, type Form } from '../input/form.js';
import { clientLeft } from '../jobs.js';
import type { Services } from '../services.js';

/** Routes run their jobs through runJob (server/jobs.ts: admission, queue, budget, cancellation). */
export { runJob } from '../jobs.js';

/**
 * The headers of every answer whose body is an image (a raw result, a download, a signed URL's):
 * these share their origin with the playground, which keeps the API key in the browser, so an
 * image is never sniffed into HTML or script, and were it rendered as a document it runs nothing.
 */
export function setImageSafetyHeaders(ctx: Context): void {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Content-Security-Policy', 'sandbox');
}

export async function readImageForm(ctx: Context, services: Services, allowed: readonly string[]): Promise<Form> {
  return readForm(ctx, { allowed, maxInputBytes: services.config.maxInputBytes, timeoutMs: services.config.requestTimeoutMs });
}

export function outputField(form: Form): OutputMode {
  const text = form.fields.output;
  return text === undefined ? 'url' : parseEnumField('output', OUTPUT_MODES, text);
}

/**
 * The input image's bytes: the uploaded file, or the fetched URL (checked before anything else).
 * Either buffer is the request's own and never touched again, so the routes hand it over to the
 * job (`handOver: true`): read in place, not copied.
 */
export async function inputBytes(form: Form, services: Services): Promise<Buffer> {
  if (form.file) return form.file;
  const text = form.fields.input;
  if (text === undefined || text.trim() === '') {
    throw new HttpError(400, 'input_missing', 'input is required: upload an image file or give an image URL', { path: 'input' });
  }
  // A background image uploaded with it shares the input's byte limit (docs/api.md, "Extensions: staged cut-outs").
  return fetchUrl(parseInputUrl(text), services, services.config.maxInputBytes - (form.backgroundImage?.length ?? 0));
}

/** Fetches an image URL through the guarded fetcher (server/input/fetch.ts), at most `maxBytes`, counted by outcome. */
export async function fetchUrl(url: URL, services: Services, maxBytes = services.fetch.maxBytes): Promise<Buffer> {
  try {
    const bytes = await fetchInputUrl(url, { ...services.fetch, maxBytes: Math.min(services.fetch.maxBytes, maxBytes) });
    services.metrics.urlFetched('ok');
    return bytes;
  } catch (err) {
    services.metrics.urlFetched((err as { code?: string }).code ?? 'error');
    throw err;
  }
}

/** The form field's name in an error about the input's fetch or upload that was about the background image. */
function aboutField(err: unknown, field: string): unknown {
  if (!(err instanceof HttpError) || err.path !== 'input') return err;
  const message = err.message.replace(/\binput\b/, field);
  return new HttpError(err.status, err.code, message, { path: field, headers: err.headers, closeConnection: err.closeConnection, cause: err.cause ?? err, detail: err.detail });
}

/**
 * The `background_image` of a form (a file part, or a text field with an http(s) URL fetched as
 * `input` is: the same guard, slots and deadline), or undefined. With the input, at most
 * MATTE_MAX_INPUT_BYTES together (413 input_too_large at background_image).
 */
export async function backgroundImageBytes(form: Form, services: Services, input: Buffer): Promise<Buffer | undefined> {
  const room = services.config.maxInputBytes - input.length;
  const tooLarge = () => new HttpError(413, 'input_too_large', `the input and the background_image together are larger than the limit of ${services.config.maxInputBytes} bytes`, { path: 'background_image' });
  if (form.backgroundImage) {
    if (form.backgroundImage.length > room) throw tooLarge();
    return form.backgroundImage;
  }
  const text = form.fields.background_image;
  if (text === undefined) return undefined;
  if (room <= 0) throw tooLarge();
  try {
    return await fetchUrl(parseInputUrl(text), services, room);
  } catch (err) {
    throw aboutField(err, 'background_image');
  }
}

/** A job's error about the background image names the form field (the library names its option). */
export function backgroundImageField(err: unknown): unknown {
  if (err instanceof MatteError && err.path === 'backgroundImage') return new MatteError(err.code, err.message, 'background_image');
  return err;
}

/**
 * Fills in the steps of an edit that run the model: a removeBackground's `refine` and `model` from
 * the request's own fields where the operation sets none, the model checked against the loaded
 * ones; a resize whose gravity is `subject` runs the job's model (the removeBackground's, else the
 * `model` field's). The model is checked even when no step runs it, so that a mistake is not
 * silently ignored. Returns the job's model when a step runs it.
 */
export async function resolveMatting(steps: Step[], services: Services, refine: boolean | undefined, model: string | undefined): Promise<{ model: string } | undefined> {
  const index = steps.findIndex((s) => s.op === 'removeBackground');
  const matting = steps[index];
  let jobModel = await services.model.check(model);
  if (matting?.op === 'removeBackground') {
    matting.refine ??= refine;
    matting.model = matting.model === undefined ? jobModel : await services.model.check(matting.model, `operations[${index}].removeBackground.model`);
    jobModel = matting.model;
  }
  const subjects = steps.filter((s) => s.op === 'resize' && s.gravity === 'subject');
  for (const step of subjects) if (step.op === 'resize') step.model = jobModel;
  return matting || subjects.length ? { model: jobModel } : undefined;
}

export async function sendResult(ctx: Context, services: Services, result: Result, output: OutputMode): Promise<void> {
  if (output === 'raw') {
    ctx.status = 200;
    ctx.type = result.mediaType;
    ctx.set('X-Image-Width', String(result.width));
    ctx.set('X-Image-Height', String(result.height));
    ctx.set('Cache-Control', 'no-store');
    setImageSafetyHeaders(ctx);
    ctx.body = result.data;
    return;
  }
  if (clientLeft(ctx)) throw new HttpError(400, 'client_closed', 'the client went away before the result was stored');
  const { store, metrics } = services;
  let stored, presigned;
  try {
    stored = await store.put(result.data, { ext: result.format, mediaType: result.mediaType });
    presigned = await store.publicUrl?.(stored); // MATTE_RESULTS_PRESIGN=1: the bucket's own URL
  } catch (err) {
    const error = storeError(err); // 507 insufficient_storage or 503 store_unavailable, never 500
    metrics.resultNotStored(store.kind, error.code);
    throw error;
  }
  metrics.resultStored(store.kind, stored.size);
  ctx.status = 200;
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { id: stored.id, url: presigned ?? `${services.config.publicUrl}/images/results/${stored.id}.${stored.ext}` };
}
