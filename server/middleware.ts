// Small Koa middleware of the server: request id, access log, early-refusal draining and API-key
// auth. The job limiter and admission are in jobs.ts, with the rest of a job's life.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import type { AuthFailures } from './auth-failures.js';
import { HttpError } from './errors.js';

// ---- request id and access log ------------------------------------------------------------------

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * The path as logged. A result's id is its download capability, so only its first 6 characters
 * (36 of its 144 bits: enough to tell results apart in a log, useless to fetch one) are written. A
 * signed path is a capability too, and its options segment holds the input URL (base64url of the
 * options), which is never logged: the signature's first 6 characters and the extension are kept.
 */
export function loggedPath(path: string): string {
  // Any spelling of the prefixes (case, repeated slashes), whatever follows: a path the router
  // refuses may still hold an id or a signed URL.
  return path
    .replace(/^(\/+images\/+results\/+)([^/]*)(.*)$/is, (_m, prefix: string, name: string, rest: string) => `${prefix}${name.slice(0, 6)}…${extensionOf(name)}${rest ? '/…' : ''}`)
    .replace(/^(\/+images\/+signed\/+)([^/]*)(.*)$/is, (_m, prefix: string, signature: string, rest: string) => {
      const options = rest.slice(1);
      return `${prefix}${signature.slice(0, 6)}…${rest ? `/…${options.includes('/') ? '' : extensionOf(options)}` : ''}`;
    });
}

/** `.png` of `name.png` (at most 8 characters of an extension), '' when there is none. */
function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? name.slice(dot) : '';
  return /^\.[A-Za-z0-9]{1,8}$/.test(ext) ? ext : '';
}

/**
 * What a request's middleware and routes share (ctx.state): its id, its logger, and what they add
 * (errorCode, model, closeConnection). The request's child logger is made only when something logs
 * through it (an error), since the access line names the id itself, and its getter lives on this
 * class: a child, or a property defined, per request would cost the main thread on every small
 * request.
 */
class RequestState {
  private child?: Logger;
  constructor(
    private readonly logger: Logger,
    readonly requestId: string,
  ) {}

  get log(): Logger {
    return (this.child ??= this.logger.child({ reqId: this.requestId }));
  }
}

/**
 * Gives every request an id (a well-formed incoming X-Request-Id is kept, so a proxy's id carries
 * through), sets X-Request-Id on every response, and logs one line per request when it is done:
 * id, method, path, status, bytes, milliseconds, client and peer addresses. Headers (and so API
 * keys) are never logged.
 */
export function requestContext(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    const started = process.hrtime.bigint();
    const peer = ctx.req.socket.remoteAddress; // read now: a destroyed socket may no longer say
    const incoming = ctx.get('X-Request-Id');
    const requestId = INCOMING_ID.test(incoming) ? incoming : randomUUID();
    ctx.state = new RequestState(logger, requestId);
    ctx.set('X-Request-Id', requestId);
    // Every answer is typed (JSON, an image, a page, a zip): none is ever to be sniffed as another.
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.res.once('close', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const line: Record<string, unknown> = { reqId: requestId, method: ctx.method, path: loggedPath(ctx.path), status: ctx.status, ms: Math.round(ms * 10) / 10, bytes: ctx.response.length };
      // The client (ctx.ip: behind a trusted proxy, the address it names; server/client-address.ts) and the connection's peer.
      line.client = ctx.ip;
      line.peer = peer;
      if (!ctx.res.writableFinished) line.aborted = true;
      if (ctx.state.errorCode) line.code = ctx.state.errorCode;
      logger.info(line, 'request');
    });
    await next();
  };
}

// ---- early refusals: answer, then drain gracefully ---------------------------------------------------

export interface LingerOptions {
  /** How long an unread request body is drained after the response before the socket is closed. */
  lingerMs: number;
  /** How many bytes are drained at most. */
  maxDrainBytes: number;
}

/**
 * A request refused before its body was read (401, 413, 400 on a bad form, 503) still gets its
 * full response: Node then reads and discards the rest of the body (keep-alive), which lets the
 * client see the status instead of a connection reset. This bounds that drain: once the response
 * is sent, the socket is closed after `lingerMs` or `maxDrainBytes`, whichever comes first. The
 * body is never buffered.
 */
export function drainUnreadBody(options: LingerOptions) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
    } finally {
      const req = ctx.req;
      // A refusal (401, 413, 503, a bad form: HttpError closeConnection, see sendError) ends the
      // connection: the client is told, and the socket is closed once the response is out.
      const close = ctx.state.closeConnection === true;
      if (close && !ctx.headerSent) ctx.set('Connection', 'close');
      if (close && !req.complete) {
        // With `Connection: close` Node destroys the socket as soon as the response is written; with
        // body bytes still arriving, that sends a reset which can make the client lose the answer
        // (it is often still writing). So Node keeps the socket (its private _last flag, read when
        // the response finishes), and the drain below ends it once the body is in or the bound is hit.
        ctx.res.once('prefinish', () => {
          (ctx.res as unknown as { _last: boolean })._last = false;
        });
      }
      if (!req.complete) {
        ctx.res.once('finish', () => {
          if (req.complete || req.destroyed) {
            if (close) req.socket.end();
            return;
          }
          // Node discards the rest of the body itself (it no longer reaches 'data' listeners once
          // the response is done), so progress is read from the socket's byte counter.
          req.unpipe();
          req.resume();
          const socket = req.socket;
          const startBytes = socket.bytesRead;
          const started = Date.now();
          const timer = setInterval(() => {
            if (req.complete || socket.destroyed) {
              clearInterval(timer);
              if (close) socket.end(); // all of the body read: a clean close, no reset
            } else if (Date.now() - started >= options.lingerMs || socket.bytesRead - startBytes > options.maxDrainBytes) {
              clearInterval(timer);
              socket.destroy();
            }
          }, 50);
          timer.unref();
        });
      }
    }
  };
}

// ---- API keys ----------------------------------------------------------------------------------------

/**
 * X-Api-Key checked in constant time: the given key's UTF-8 bytes, zero-padded to the longest
 * configured key, are compared with every configured key (padded the same way) by
 * crypto.timingSafeEqual, and the byte lengths compared when the bytes match; every configured key
 * is compared every time, and the time taken depends on no key's content. Runs before the body is
 * read. Padding rather than hashing both sides: no hash context to set up on every request.
 */
export function apiKeyAuth(keys: readonly string[], failures?: AuthFailures) {
  const width = Math.max(1, ...keys.map((key) => Buffer.byteLength(key, 'utf8')));
  const padded = keys.map((key) => {
    const bytes = Buffer.alloc(width);
    bytes.write(key, 'utf8');
    return { bytes, length: Buffer.byteLength(key, 'utf8') };
  });
  // Filled and compared synchronously, so one buffer serves every request.
  const candidate = Buffer.alloc(width);
  return async (ctx: Context, next: Next) => {
    const given = ctx.get('X-Api-Key');
    candidate.fill(0);
    candidate.write(given, 'utf8'); // a longer key is cut short here, and its length matches no key's
    const length = Buffer.byteLength(given, 'utf8');
    let ok = false;
    for (const key of padded) ok = (timingSafeEqual(candidate, key.bytes) && length === key.length) || ok;
    if (!given || !ok) {
      failures?.wrongKey(ctx.ip, given); // 429 once this key or this address has failed too often
      throw new HttpError(401, 'unauthorized', given ? 'the API key in X-Api-Key is not valid' : 'send your API key in the X-Api-Key header', {
        headers: { 'WWW-Authenticate': 'X-Api-Key' },
        closeConnection: true,
      });
    }
    await next();
  };
}
