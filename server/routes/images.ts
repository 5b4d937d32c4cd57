// What both image endpoints share: the optional form fields, the input (upload or URL), running
// the job in the limiter, and answering in `raw` or `url` mode.
import type { Context } from 'koa';
import { MatteError, OUTPUT_MODES, parseEnumField, type JobControl, type OutputMode, type Result } from '../../lib/index.js';
import { HttpError } from '../errors.js';
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
  return fetchInputUrl(parseInputUrl(text), services.fetch);
}

/**
 * Runs an image job within the limiter (at most MATTE_CONCURRENCY at once, a bounded queue), with
 * the job's time budget (MATTE_JOB_TIMEOUT_SECONDS) and a signal that stops it, queued or running,
 * when the client goes away or the shutdown timeout is reached (server/jobs.ts).
 */
export async function runJob(ctx: Context, services: Services, job: (control: JobControl) => Promise<Result>): Promise<Result> {
  const { signal, done } = services.jobs.open(ctx);
  try {
    return await services.limiter.run(() => job({ timeout: services.config.jobTimeoutMs / 1000, signal }), signal);
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
    ctx.body = result.data;
    return;
  }
  const stored = await services.store.put(result.data, { ext: result.format, mediaType: result.mediaType });
  ctx.status = 200;
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { id: stored.id, url: `${services.config.publicUrl}/images/results/${stored.id}.${stored.ext}` };
}
