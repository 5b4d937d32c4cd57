// What both image endpoints share: the optional form fields, the input (upload or URL), running
// the job in the limiter, and answering in `raw` or `url` mode.
import type { Context } from 'koa';
import { OUTPUT_MODES, parseEnumField, type OutputMode, type Result } from '../../lib/index.js';
import { HttpError } from '../errors.js';
import { storeError } from '../store/errors.js';
import { fetchInputUrl, parseInputUrl, readForm, type Form } from '../input.js';
import type { Services } from '../services.js';

export async function readImageForm(ctx: Context, services: Services, allowed: readonly string[]): Promise<Form> {
  return readForm(ctx, { allowed, maxInputBytes: services.config.maxInputBytes, timeoutMs: services.config.requestTimeoutMs });
}

export function outputField(form: Form): OutputMode {
  const text = form.fields.output;
  return text === undefined ? 'url' : parseEnumField('output', OUTPUT_MODES, text);
}

/** The input image's bytes: the uploaded file, or the fetched URL (checked before anything else). */
export async function inputBytes(form: Form, services: Services): Promise<Buffer> {
  if (form.file) return form.file;
  const text = form.fields.input;
  if (text === undefined || text.trim() === '') {
    throw new HttpError(400, 'input_missing', 'input is required: upload an image file or give an image URL', { path: 'input' });
  }
  const url = parseInputUrl(text);
  try {
    const bytes = await fetchInputUrl(url, services.fetch);
    services.metrics.urlFetched('ok');
    return bytes;
  } catch (err) {
    services.metrics.urlFetched((err as { code?: string }).code ?? 'error');
    throw err;
  }
}

/** An AbortSignal that fires when the client goes away before the response is sent. */
export function clientGone(ctx: Context): AbortSignal {
  const controller = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** Runs an image job within the limiter (at most MATTE_CONCURRENCY at once, a bounded queue). */
export function runJob(ctx: Context, services: Services, job: () => Promise<Result>): Promise<Result> {
  const timed = async () => {
    const started = process.hrtime.bigint();
    try {
      return await job();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      services.metrics.jobDone(ctx.path, seconds, ctx.state.usesModel ? services.model.name : undefined);
    }
  };
  return services.limiter.run(timed, clientGone(ctx));
}

export async function sendResult(ctx: Context, services: Services, result: Result, output: OutputMode): Promise<void> {
  if (output === 'raw') {
    ctx.status = 200;
    ctx.type = result.mediaType;
    ctx.set('X-Image-Width', String(result.width));
    ctx.set('X-Image-Height', String(result.height));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = result.data;
    return;
  }
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
