// What the three URL dialects (imgproxy.ts, cloudflare.ts, ipx.ts) share once their URL is read:
// the source checked (sources.ts) before anything is fetched, the operations validated by matte's
// own schema, the format chosen (the URL's, the Accept header's, or the source's own), the answer
// from the result cache or the job (server/cached-image.ts), its Cache-Control, ETag and Vary, a
// 304 without a decode, and every error in the dialect's own form (never a 500 for a bad URL).
// A dialect is only its translation and its error form; this file is the route.
import type Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { editSteps, MEDIA_TYPES, OUTPUT_FORMATS, parseOperations, type FormatChoice, type OutputFormat, type Step } from '../../lib/index.js';
import { canonicalJson } from '../../lib/matte-cache.js';
import { answerEtag, cachedImage, knownSource, type KnownSource } from '../cached-image.js';
import { HttpError, toHttpError } from '../errors.js';
import { negotiateFormat, type NegotiatedFormat } from '../negotiate-format.js';
import { resolveMatting, runJob, setImageSafetyHeaders } from '../routes/images.js';
import { matchesEtag } from '../routes/results.js';
import type { Services } from '../services.js';
import { resolveSource } from './sources.js';

/**
 * The answer's format as a dialect asks for it: one of matte's, `auto` (PNG where the result has
 * alpha, else JPEG), `negotiate` (from the request's Accept: AVIF or WebP where allowed, else auto),
 * or `source` (the source's own format where matte writes it, else auto).
 */
export type DialectFormat = OutputFormat | 'auto' | 'negotiate' | 'source';

/** One of matte's operations, as JSON (validated by lib/schema.ts like any other). */
export type DialectOperation = Record<string, unknown>;

/** A dialect URL read and translated. */
export interface DialectRequest {
  /** The source as the URL gives it (decoded as the dialect decodes it): relative or absolute. */
  source: string;
  /** Signed by a key of the server (imgproxy): an absolute source needs no MATTE_SOURCES prefix when none is listed. */
  signed?: boolean;
  /** matte's operations, in the dialect's own order. */
  operations: DialectOperation[];
  format: DialectFormat;
  quality?: number;
  /** Keep an animation's frames (default true). */
  anim?: boolean;
  cacheControl: string;
}

export interface DialectParse {
  name: 'imgproxy' | 'cloudflare' | 'ipx';
  /** The path the dialect's URLs start after ('' for the host's root). */
  prefix: string;
  /** Reads the path after the prefix, as received (and the query, without its `?`); throws an HttpError for a bad URL. */
  parse(rawPath: string, query: string, ctx: Context): DialectRequest;
  /** The error as the dialect answers it (status, body, headers). */
  answerError(err: HttpError): HttpError;
}

/** An HttpError re-dressed in a dialect's form: its status, body and media type, matte's code kept for the log. */
export function answerDialectError(err: HttpError, form: { status?: number; type: string; body: unknown; headers?: Record<string, string> }): HttpError {
  return new HttpError(form.status ?? err.status, err.code, err.message, {
    path: err.path,
    headers: { ...err.headers, ...form.headers, 'Content-Type': form.type, 'Cache-Control': 'no-store' },
    closeConnection: err.closeConnection,
    cause: err.cause ?? err,
    detail: err.detail,
    body: form.body,
  });
}

/** The formats matte writes that a source may be kept in (`source`). */
const KEPT_FORMATS: readonly string[] = OUTPUT_FORMATS;

/** The format the answer is encoded in, and whether it depends on the Accept header. */
function chosenFormat(format: DialectFormat, source: KnownSource, accept: string, allowed: readonly NegotiatedFormat[]): { format: FormatChoice; vary: boolean } {
  if (format === 'negotiate') return { format: negotiateFormat(accept, allowed), vary: true };
  if (format === 'source') return { format: source.type && KEPT_FORMATS.includes(source.type) ? (source.type as OutputFormat) : 'auto', vary: false };
  return { format, vary: false };
}

/** The steps of the translation (none: the image re-encoded), checked by matte's schema. */
function stepsOf(operations: DialectOperation[]): Step[] {
  return operations.length === 0 ? [] : parseOperations(operations);
}

/** First on a dialect's route: whatever is thrown (the load check's 503 included) leaves in the dialect's form, counted. */
function dialectErrors(dialect: DialectParse, services: Services): Middleware {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      services.metrics.dialectRequest(dialect.name, ctx.status === 304 ? '304' : '200');
    } catch (err) {
      const error = toHttpError(err, ctx.state.requestId, services.model.ready);
      services.metrics.dialectRequest(dialect.name, error.status === 403 ? '403' : 'error');
      throw dialect.answerError(error);
    }
  };
}

/** A dialect URL read and checked: its steps valid, its source allowed. */
interface CheckedRequest extends DialectRequest {
  steps: Step[];
  url: URL;
}

/** The dialect's answer to a GET (or HEAD) whose URL was read and checked. */
async function answer(ctx: Context, services: Services, request: CheckedRequest): Promise<void> {
  const { steps, url } = request;
  const matting = await resolveMatting(steps, services, undefined, undefined);
  const known = await knownSource(services, url);
  const { format, vary } = chosenFormat(request.format, known, ctx.get('Accept'), services.config.autoFormats);
  const anim = request.anim ?? true;
  const variant = canonicalJson({ steps, format, quality: request.quality ?? null, anim });
  const headers = (source: KnownSource) => {
    ctx.set('ETag', answerEtag(variant, source));
    ctx.set('Cache-Control', request.cacheControl);
    if (vary) ctx.vary('Accept');
  };
  headers(known);
  if (matchesEtag(ctx.get('If-None-Match'), answerEtag(variant, known))) {
    ctx.status = 304;
    return;
  }
  const render = async (input: Buffer) => {
    if (matting) {
      ctx.state.model = matting.model;
      await services.model.ensure();
    }
    return runJob(ctx, services, (control) => editSteps(input, steps, { format, quality: request.quality, anim, limits: services.limits, matteCache: services.matteCache, handOver: true, ...control }));
  };
  const { image, source } = await cachedImage(services, { source: url, variant, render }, known);
  if (source !== known) headers(source);
  ctx.status = 200;
  ctx.type = MEDIA_TYPES[image.format];
  ctx.set('X-Image-Width', String(image.width));
  ctx.set('X-Image-Height', String(image.height));
  setImageSafetyHeaders(ctx);
  ctx.body = image.data;
}

/** The middleware that answers a dialect's URL at `ctx.path` (its prefix already matched). */
export function dialectHandler(dialect: DialectParse, services: Services, guards: Middleware[]): Middleware {
  const read: Middleware = async (ctx, next) => {
    // Read (for imgproxy, the signature checked first), validated and the source allowed before
    // the load check and any fetch: a bad URL never takes a slot nor costs a request to a source.
    const request = dialect.parse(ctx.path.slice(dialect.prefix.length), ctx.querystring, ctx);
    const checked: CheckedRequest = { ...request, steps: stepsOf(request.operations), url: resolveSource(request.source, services.config, request.signed) };
    ctx.state.dialectRequest = checked;
    await next();
  };
  const chain = [dialectErrors(dialect, services), read, ...guards, (ctx: Context) => answer(ctx, services, ctx.state.dialectRequest as CheckedRequest)];
  return (ctx, next) => compose(chain)(ctx, next);
}

/** Koa's compose, for a chain mounted as one middleware (a route, or the fallback of imgproxy at the root). */
function compose(chain: Middleware[]): Middleware {
  return (ctx, next) => {
    const run = (i: number): Promise<void> => (i < chain.length ? Promise.resolve(chain[i]!(ctx, () => run(i + 1))) : Promise.resolve(next()));
    return run(0);
  };
}

/** Mounts a dialect under its prefix on the router (imgproxy at the root is the app's fallback instead: foreign/index.ts). */
export function dialectRoute(router: Router, dialect: DialectParse, services: Services, guards: Middleware[]): void {
  router.get(`${dialect.prefix}/*rest`, dialectHandler(dialect, services, guards));
}
