// What both image endpoints share: the optional form fields, the input (upload or URL), running
// the job in the limiter, and answering in `raw` or `url` mode.
import type { Context } from 'koa';
import { MatteError, OUTPUT_MODES, parseEnumField, type JobControl, type OutputMode, type Result } from '../../lib/index.js';
import { handOver } from '../../lib/handover.js';
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

/**
 * The input image's bytes: the uploaded file, or the fetched URL (checked before anything else).
 * Either buffer is the request's own and never touched again, so it is handed over to the job
 * (lib/handover.ts): read in place, not copied.
 */
export async function inputBytes(form: Form, services: Services): Promise<Buffer> {
  if (form.file) return handOver(form.file);
  const text = form.fields.input;
  if (text === undefined || text.trim() === '') {
    throw new HttpError(400, 'input_missing', 'input is required: upload an image file or give an image URL', { path: 'input' });
  }
  const url = parseInputUrl(text);
  try {
    const bytes = await fetchInputUrl(url, services.fetch);
    services.metrics.urlFetched('ok');
    return handOver(bytes);
  } catch (err) {
    services.metrics.urlFetched((err as { code?: string }).code ?? 'error');
    throw err;
  }
}

/** Whether the client's connection is already gone (its 'close' may have fired before we listened). */
function left(ctx: Context): boolean {
  return !ctx.req.socket || ctx.req.socket.destroyed;
}

/**
 * Runs an image job within the limiter (at most MATTE_CONCURRENCY at once, a bounded queue), with
 * the job's time budget (MATTE_JOB_TIMEOUT_SECONDS) and a signal that stops it, queued or running,
 * when the client goes away or the shutdown timeout is reached (server/jobs.ts). A client that left
 * while its URL was fetched or the model loaded gets no job: it never queues.
 */
export async function runJob(ctx: Context, services: Services, job: (control: JobControl) => Promise<Result>): Promise<Result> {
  if (left(ctx)) throw new HttpError(400, 'client_closed', 'the client went away before the job started');
  const { signal, done } = services.jobs.open(ctx);
  try {
    return await services.limiter.run(async () => {
      const started = process.hrtime.bigint();
      try {
        return await job({ timeout: services.config.jobTimeoutMs / 1000, signal });
      } finally {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9; // in its slot: queueing excluded
        services.metrics.jobDone(ctx.path, seconds, ctx.state.model as string | undefined);
      }
    }, signal);
  } catch (err) {
    // Stopped by its signal: the request ends as the abort's reason says (client_closed, shutting_down).
    if (err instanceof MatteError && err.code === 'aborted' && signal.reason instanceof HttpError) throw signal.reason;
    throw err;
  } finally {
    done();
  }
}

export async function sendResult(ctx: Context, services: Services, result: Result, output: OutputMode): Promise<void> {
  if (output === 'raw') {
    ctx.status = 200;
    ctx.type = result.mediaType;
    ctx.set('X-Image-Width', String(result.width));
    ctx.set('X-Image-Height', String(result.height));
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff'); // as downloads (routes/results.ts)
    ctx.set('Content-Security-Policy', 'sandbox');
    ctx.body = result.data;
    return;
  }
  if (left(ctx)) throw new HttpError(400, 'client_closed', 'the client went away before the result was stored');
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
