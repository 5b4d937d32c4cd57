// remove.bg's API on matte (docs/api.md, "The remove.bg-compatible API"): POST /v1.0/removebg,
// GET /v1.0/account and POST /v1.0/improve, as remove.bg's OpenAPI document describes them, so
// that an integration changes its base URL and key and nothing else. The fields and how they map
// onto the pipeline are removebg-fields.ts; here: the three request bodies, the answer (image or
// JSON, remove.bg's headers), and every error in remove.bg's shape and status codes. The job goes
// through the same key check, admission, limits, URL guard, budget and cancellation as matte's
// own routes (images.ts, server/jobs.ts).
import { randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { zipSync } from 'fflate';
import { editSteps, MatteError, type JobControl, type Result } from '../../lib/index.js';
import { HttpError, toHttpError } from '../errors.js';
import { Base64Decoder, Base64Error } from '../input/base64-stream.js';
import { FORM_OVERHEAD_BYTES, MAX_FIELD_BYTES, readForm } from '../input/form.js';
import { readJsonFields, readUrlEncodedFields } from '../input/text-body.js';
import type { Services } from '../services.js';
import { fetchUrl, runJob } from '../routes/images.js';
import {
  base64Refusal,
  IMPROVE_FIELDS,
  IMPROVE_FILE_FIELDS,
  imageSource,
  knownType,
  modelFor,
  parseSettings,
  REMOVEBG_FIELDS,
  REMOVEBG_FILE_FIELDS,
  removeBgSteps,
  type RemoveBgPlan,
} from './removebg-fields.js';

/** The zip entries' modification date: the earliest a zip can hold (1980-01-01, DOS time). */
const ZIP_ENTRY_DATE = new Date(1980, 0, 1);

/** remove.bg's JPEG answers (format=jpg, auto over an opaque background, the zip's colour image). */
export const REMOVEBG_JPEG_QUALITY = 90;

// ---- errors: remove.bg's shape and status codes -------------------------------------------------

/** The titles of the document's error examples, by code; other codes get their status's title. */
const TITLES: Record<string, string> = {
  failed_bg_download: 'Failed to download background image from given bg_image_url',
  failed_image_download: 'Failed to download image from given image_url',
  failed_to_read_image: 'There was an error reading the image.',
  file_too_large: 'File too large',
  invalid_bg_color: 'Invalid bg_color parameter given',
  invalid_bg_image_url: 'Invalid bg_image_url: Please provide a valid URL.',
  invalid_channels: "Invalid value for parameter 'channels'",
  invalid_crop_margin: 'Invalid crop_margin parameter given',
  invalid_format: 'Invalid format parameter given',
  invalid_image_url: 'Invalid image_url: Please provide a valid URL.',
  invalid_position: 'Invalid position parameter given',
  invalid_roi: 'Invalid roi parameter given',
  invalid_scale: 'Invalid scale parameter given',
  invalid_semitransparency: 'Invalid semitransparency parameter given',
  invalid_size: "Invalid value for parameter 'size'",
  missing_source: 'No image given',
  multiple_bg_sources: 'Multiple background sources given: Please provide either the bg_color, the bg_image_url or the bg_image_file parameter.',
  multiple_sources: 'Multiple image sources given: Please provide either the image_url, image_file or image_file_b64 parameter.',
  resolution_too_high: 'Image resolution too high',
  roi_exceeds_bounds: 'ROI exceeds image bounds',
  roi_region_empty: 'ROI region is empty',
  unknown_foreground: 'Could not identify foreground in image.',
};

/** matte's own codes that have a remove.bg counterpart. */
const CODES: Record<string, string> = {
  input_too_large: 'file_too_large',
  image_too_large: 'resolution_too_high',
  unsupported_image: 'failed_to_read_image',
  unknown_field: 'unknown_parameter',
  invalid_field: 'invalid_parameter',
};

/**
 * remove.bg's statuses: 400 for every client error, 403 for a missing or wrong key, 429 for too
 * many wrong keys and for load shed (with Retry-After); a server fault keeps matte's 5xx.
 */
function removeBgStatus(err: HttpError): number {
  if (err.status === 401) return 403;
  if (err.status === 429 || err.code === 'overloaded') return 429;
  if (err.status >= 500) return err.status;
  return 400;
}

/** The body remove.bg sends: {"errors": [{"title", "code", "detail"}]}. */
function toRemoveBgError(err: HttpError, keyGiven: boolean): HttpError {
  const status = removeBgStatus(err);
  const code = CODES[err.code] ?? err.code;
  const title =
    status === 403
      ? keyGiven ? 'Invalid API Key' : 'Missing API Key'
      : status === 429
        ? 'Rate limit exceeded'
        : (TITLES[code] ?? (status >= 500 ? 'Internal server error' : 'Invalid parameters or input file unprocessable'));
  const headers = { ...err.headers };
  delete headers['WWW-Authenticate'];
  return new HttpError(status, code, err.message, {
    path: err.path,
    headers,
    closeConnection: err.closeConnection,
    cause: err.cause ?? err,
    detail: err.detail,
    body: { errors: [{ title, code, detail: err.message }] },
  });
}

/** First on every remove.bg route: whatever is thrown (the key check included) leaves in remove.bg's shape. */
function removeBgErrors(services: Services): Middleware {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
    } catch (err) {
      throw toRemoveBgError(toHttpError(err, ctx.state.requestId, services.model.ready), ctx.get('X-Api-Key') !== '');
    }
  };
}

// ---- the three request bodies -----------------------------------------------------------------

interface Body {
  fields: Record<string, string>;
  /** The uploaded files, and image_file_b64 decoded (from any of the three bodies). */
  files: Record<string, Buffer>;
}

/** The field whose text is an image in base64. */
const BASE64_FIELD = 'image_file_b64';

/**
 * multipart/form-data, application/x-www-form-urlencoded or application/json, within one bound
 * for everything the body carries, files and base64 text together (the upload limit and the
 * form's allowance, as matte's own routes; refused from Content-Length before a byte is read),
 * and the request timeout. The JSON and url-encoded bodies are checked as they stream
 * (server/input/text-body.ts); image_file_b64 is decoded as it arrives, at most the upload limit.
 * Values are text (JSON's booleans and numbers as text), at most MAX_FIELD_BYTES each; an empty
 * value counts as absent.
 */
async function readRemoveBgBody(ctx: Context, services: Services, allowed: readonly string[], fileFields: readonly string[]): Promise<Body> {
  const { maxInputBytes, requestTimeoutMs } = services.config;
  const bounds = { maxBodyBytes: maxInputBytes + FORM_OVERHEAD_BYTES, maxInputBytes, timeoutMs: requestTimeoutMs };
  try {
    if (ctx.is('multipart/form-data')) return await readRemoveBgForm(ctx, services, allowed, fileFields);
    const rules = { allowed, fileOnly: fileFields, base64: { name: BASE64_FIELD, maxBytes: maxInputBytes }, maxValueBytes: MAX_FIELD_BYTES };
    const read = ctx.is('application/json') ? readJsonFields : ctx.is('application/x-www-form-urlencoded') ? readUrlEncodedFields : undefined;
    if (!read) throw new HttpError(400, 'invalid_content_type', 'the body must be multipart/form-data, application/x-www-form-urlencoded or application/json', { closeConnection: true });
    const { fields, decoded } = await read(ctx, rules, bounds);
    return { fields, files: decoded ? { [BASE64_FIELD]: decoded } : {} };
  } catch (err) {
    throw err instanceof Base64Error ? base64Refusal(err, maxInputBytes) : err;
  }
}

/** A multipart body: multer holds a text field whole, so image_file_b64 is decoded once it is in. */
async function readRemoveBgForm(ctx: Context, services: Services, allowed: readonly string[], fileFields: readonly string[]): Promise<Body> {
  const { maxInputBytes, requestTimeoutMs } = services.config;
  const form = await readForm(ctx, { allowed, files: fileFields, maxInputBytes, maxFieldBytes: maxInputBytes + FORM_OVERHEAD_BYTES, timeoutMs: requestTimeoutMs });
  const fields: Record<string, string> = {};
  const files = { ...form.files };
  for (const [name, value] of Object.entries(form.fields)) {
    if (name === BASE64_FIELD) {
      const decoder = new Base64Decoder(maxInputBytes, Math.ceil((value.length * 3) / 4));
      decoder.push(value);
      const bytes = decoder.end();
      if (bytes.length > 0) files[name] = bytes;
      continue;
    }
    if (Buffer.byteLength(value) > MAX_FIELD_BYTES) throw new HttpError(400, 'invalid_field', `${name} is longer than ${MAX_FIELD_BYTES} bytes`, { path: name });
    if (value.trim() !== '') fields[name] = value;
  }
  return { fields, files };
}

// ---- POST /v1.0/removebg ----------------------------------------------------------------------

/** A guarded fetch (at most `maxBytes`) whose refusals are remove.bg's `failed_image_download` / `failed_bg_download`. */
async function download(url: URL, services: Services, code: string, field: string, maxBytes: number): Promise<Buffer> {
  try {
    return await fetchUrl(url, services, maxBytes);
  } catch (err) {
    if (err instanceof HttpError && (err.code === 'input_url_forbidden' || err.code === 'input_url_fetch_failed')) {
      throw new HttpError(400, code, `${field}: ${err.message}`, { path: field, cause: err, detail: err.detail });
    }
    throw err;
  }
}

interface Answer {
  result: Result;
  /** The zip's bytes (format=zip), else the result's own. */
  data: Buffer;
  mediaType: string;
}

/**
 * The job's one budget over several runs (format=zip runs three): each run gets what the runs
 * before it left, and running out anywhere is the whole budget's job_timeout.
 */
function sharedBudget(control: JobControl): { left(): JobControl; renamed(err: unknown): unknown } {
  const total = control.timeout ?? 0;
  const started = performance.now();
  const timedOut = () => new MatteError('job_timeout', `the job took longer than ${total} s and was stopped`);
  return {
    left() {
      if (!total) return control;
      const seconds = total - (performance.now() - started) / 1000;
      if (seconds <= 0) throw timedOut();
      return { ...control, timeout: seconds };
    },
    renamed: (err) => (err instanceof MatteError && err.code === 'job_timeout' ? timedOut() : err),
  };
}

/**
 * The job: one run of the steps; for format=zip, the cut-out as PNG, then its colour bands as a
 * JPEG and its alpha as a PNG (two short runs of the same job, no model, within its budget), zipped.
 */
async function runRemoveBg(ctx: Context, services: Services, input: Buffer, plan: RemoveBgPlan, backgroundImage: Buffer | undefined): Promise<Answer> {
  const { steps, output } = plan;
  return runJob(ctx, services, async (control) => {
    const budget = sharedBudget(control);
    const common = () => ({ limits: services.limits, ...budget.left() });
    try {
      const result = await editSteps(input, steps, { format: output.format, quality: REMOVEBG_JPEG_QUALITY, matteCache: services.matteCache, handOver: true, backgroundImage, ...common() }).catch((err: unknown) => {
        throw err instanceof MatteError ? plan.renamed(err) : err;
      });
      if (!output.zip) return { result, data: result.data, mediaType: result.mediaType };
      const colour = await editSteps(result.data, [{ op: 'extractColour' }], { format: 'jpeg', quality: REMOVEBG_JPEG_QUALITY, ...common() });
      const alpha = await editSteps(result.data, [{ op: 'extractAlpha' }], { format: 'png', ...common() });
      // Stored, not deflated: both are compressed images already. A fixed date makes the same
      // request give the same bytes (an ETag, a CDN, a retry), not a zip that differs by the clock.
      const entry = { level: 0, mtime: ZIP_ENTRY_DATE } as const;
      const zip = zipSync({ 'color.jpg': [colour.data, entry], 'alpha.png': [alpha.data, entry] });
      return { result, data: Buffer.from(zip.buffer, zip.byteOffset, zip.byteLength), mediaType: 'application/zip' };
    } catch (err) {
      throw budget.renamed(err);
    }
  });
}

function sendAnswer(ctx: Context, answer: Answer, type: string | undefined): void {
  const { result } = answer;
  const box = result.foreground;
  ctx.status = 200;
  ctx.set('X-Width', String(result.width));
  ctx.set('X-Height', String(result.height));
  if (box) {
    ctx.set('X-Foreground-Top', String(box.top));
    ctx.set('X-Foreground-Left', String(box.left));
    ctx.set('X-Foreground-Width', String(box.width));
    ctx.set('X-Foreground-Height', String(box.height));
  }
  ctx.set('X-Credits-Charged', '0'); // self-hosted: nothing is charged
  if (type) ctx.set('X-Type', type);
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Content-Type-Options', 'nosniff');
  if (ctx.accepts(answer.mediaType, 'application/json') === 'application/json') {
    const foreground = box ? { foreground_top: box.top, foreground_left: box.left, foreground_width: box.width, foreground_height: box.height } : {};
    // Made into bytes here: an answer waiting for a slow reader holds its JSON once, not also as text.
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = Buffer.from(JSON.stringify({ data: { result_b64: answer.data.toString('base64'), ...foreground } }));
    return;
  }
  ctx.set('Content-Security-Policy', 'sandbox'); // as matte's raw answers (images.ts)
  ctx.type = answer.mediaType;
  ctx.body = answer.data;
}

// ---- the routes --------------------------------------------------------------------------------

export interface RemoveBgGuards {
  /** The API key check (and its failure count): every route. */
  key: Middleware;
  /** Admission (load shedding): the routes that read a body. */
  admit: Middleware;
}

export function removeBgRoutes(router: Router, services: Services, guards: RemoveBgGuards): void {
  const errors = removeBgErrors(services);

  router.post('/v1.0/removebg', errors, guards.key, guards.admit, async (ctx) => {
    const { fields, files } = await readRemoveBgBody(ctx, services, REMOVEBG_FIELDS, REMOVEBG_FILE_FIELDS);
    // Every field is checked before the image is fetched or a pixel decoded.
    const source = imageSource(fields, files);
    const settings = parseSettings(fields, files);
    await services.model.check(undefined); // the loaded models' names, for modelFor
    const model = modelFor(settings.type, services.model.names);
    const plan = removeBgSteps(settings, model);
    // The image and its background image together within the upload limit, as on matte's own routes.
    const { maxInputBytes } = services.config;
    const given = plan.backgroundImage && 'file' in plan.backgroundImage ? plan.backgroundImage.file.length : 0;
    const input = source.field === 'image_url' ? await download(source.url, services, 'failed_image_download', 'image_url', maxInputBytes - given) : source.bytes;
    const background = plan.backgroundImage && ('url' in plan.backgroundImage ? await download(plan.backgroundImage.url, services, 'failed_bg_download', 'bg_image_url', maxInputBytes - input.length) : plan.backgroundImage.file);
    if (background && input.length + background.length > maxInputBytes) {
      throw new HttpError(400, 'file_too_large', `the image and the background image together exceed the limit of ${maxInputBytes} bytes`, { path: 'file' in plan.backgroundImage! ? 'bg_image_file' : 'bg_image_url' });
    }
    ctx.state.model = model; // the metrics label of the job (server/metrics.ts)
    await services.model.ensure();
    const answer = await runRemoveBg(ctx, services, input, plan, background);
    // An empty matte: remove.bg's answer is an error (and no credit), not a blank image.
    if (!answer.result.foreground) throw new HttpError(400, 'unknown_foreground', 'Could not identify foreground in image: the matte is empty (nothing was kept)');
    sendAnswer(ctx, answer, knownType(settings));
  });

  // Credits do not exist here: every call is free, which remove.bg counts as free API calls.
  router.get('/v1.0/account', errors, guards.key, (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      data: {
        attributes: {
          credits: { total: 0, subscription: 0, payg: 0, enterprise: 0 },
          api: { free_calls: FREE_CALLS, sizes: 'all' },
        },
      },
    };
  });

  // matte collects no images: a submission is read, checked as the document describes it, and
  // dropped; the id answered is fresh and refers to nothing kept.
  router.post('/v1.0/improve', errors, guards.key, guards.admit, async (ctx) => {
    const { fields, files } = await readRemoveBgBody(ctx, services, IMPROVE_FIELDS, IMPROVE_FILE_FIELDS);
    imageSource(fields, files);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { id: randomUUID() };
  });
}

/** /v1.0/account's free_calls: the largest 32-bit integer, which any client parses ("no limit"). */
export const FREE_CALLS = 2 ** 31 - 1;
