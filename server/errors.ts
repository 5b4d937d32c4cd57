// The error body of docs/api.md, "Errors", and the mapping of library codes to HTTP statuses.
// Every error, from every route, leaves the server as
//   {"error": {"code": "...", "message": "...", "path": "..."}}   (path only where there is one)
// An unexpected error becomes 500 `internal` with no stack and no file paths, only the request id.
import type { Context, Next } from 'koa';
import { MatteError } from '../lib/errors.js';

export interface ErrorBody {
  error: { code: string; message: string; path?: string };
}

/** An error meant for the client: status, stable code, message and optional path/headers. */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly path?: string;
  readonly headers: Record<string, string>;
  /** The request body may be unread: answer, then close the connection gracefully. */
  readonly closeConnection: boolean;
  /** What the log may know and the client must not (e.g. why a URL could not be fetched). */
  readonly detail?: string;
  /** A body other than matte's error body (the remove.bg route answers in remove.bg's shape). */
  readonly body?: unknown;

  constructor(status: number, code: string, message: string, options: { path?: string; headers?: Record<string, string>; closeConnection?: boolean; cause?: unknown; detail?: string; body?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HttpError';
    this.status = status;
    this.code = code;
    if (options.path !== undefined) this.path = options.path;
    this.headers = options.headers ?? {};
    this.closeConnection = options.closeConnection ?? false;
    if (options.detail !== undefined) this.detail = options.detail;
    if (options.body !== undefined) this.body = options.body;
  }
}

/** The status of each library error code (docs/api.md, "Errors"). */
export function statusOfMatteError(err: MatteError, modelReady: boolean): number {
  switch (err.code) {
    case 'invalid_operations':
    case 'invalid_json':
    case 'invalid_field':
    case 'invalid_option':
    case 'invalid_input':
      return 400;
    case 'unsupported_image':
      return 415;
    case 'image_too_large':
      return 413;
    case 'job_timeout':
      return 422;
    case 'aborted':
      return 400; // the server's own signal (client gone, shutdown) normally answers first: routes/images.ts
    case 'model_error':
      // The model is missing (not fetched, not loadable): the service is not ready, try later.
      return modelReady ? 500 : 503;
    default:
      return 500;
  }
}

/** Converts anything thrown into the HttpError that is sent. */
export function toHttpError(err: unknown, requestId: string, modelReady: boolean): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof MatteError) {
    const status = statusOfMatteError(err, modelReady);
    if (status === 500) return internalError(requestId, err);
    const headers = status === 503 ? { 'Retry-After': '30' } : undefined;
    return new HttpError(status, err.code, err.message, { path: err.path, headers, cause: err });
  }
  return internalError(requestId, err);
}

function internalError(requestId: string, cause: unknown): HttpError {
  return new HttpError(500, 'internal', `internal error; quote request id ${requestId} to the operator`, { cause });
}

export function errorBody(err: HttpError): ErrorBody {
  const error: ErrorBody['error'] = { code: err.code, message: err.message };
  if (err.path !== undefined) error.path = err.path;
  return { error };
}

/** Writes an HttpError to the context (used by the error middleware and the 404/405 fallback). */
export function sendError(ctx: Context, err: HttpError): void {
  ctx.status = err.status;
  ctx.state.errorCode = err.code;
  for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
  ctx.body = err.body ?? errorBody(err); // for HEAD, Koa sends the headers (Content-Length included) only
  if (err.closeConnection || !ctx.req.complete) ctx.state.closeConnection = true;
}

/**
 * Middleware: turns every thrown error into the JSON error body. 5xx causes are logged with the
 * request id (the body never carries a stack or a path); 4xx are logged at debug level.
 */
export function errorHandler(options: { modelReady: () => boolean }) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
    } catch (err) {
      const httpError = toHttpError(err, ctx.state.requestId, options.modelReady());
      // not_ready is a probe's answer (a model still loading at start-up), worth a warning, not an
      // error; overloaded and shutting_down are the server working as designed, not failures to look into.
      if (httpError.code === 'not_ready') {
        ctx.state.log?.warn({ code: httpError.code, detail: httpError.detail }, 'not ready');
      } else if (httpError.status >= 500 && httpError.code !== 'overloaded' && httpError.code !== 'shutting_down') {
        const cause = httpError.cause ?? err;
        ctx.state.log?.error({ err: cause, code: httpError.code }, 'request failed');
      } else if (httpError.detail !== undefined) {
        ctx.state.log?.info({ code: httpError.code, detail: httpError.detail }, 'request refused');
      }
      // Headers set before the error (e.g. by a half-done download) must not leak into the error.
      if (!ctx.headerSent) {
        // The request id, nosniff (every answer's) and the CORS headers (server/cors.ts) stay, so a
        // browser can read the error and never sniffs it.
        const keep = (name: string) => name === 'x-request-id' || name === 'x-content-type-options' || name === 'vary' || name.startsWith('access-control-');
        for (const name of Object.keys(ctx.response.headers)) if (!keep(name)) ctx.remove(name);
        sendError(ctx, httpError);
      }
    }
  };
}
