// A request body received within bounds: at most so many bytes (413 input_too_large, by
// Content-Length before a byte is read, else as it streams), within a time (408 request_timeout),
// and stopped when the client goes away. The multipart form (form.ts) is received so, and the
// remove.bg routes' JSON and url-encoded bodies (text-body.ts) too.
import type { Context } from 'koa';
import { HttpError } from '../errors.js';

/** Marks requests that came with `Expect: 100-continue` (set by the server's checkContinue). */
export const EXPECTS_CONTINUE = Symbol('matte.expectsContinue');

export function tooLarge(limit: number): HttpError {
  return new HttpError(413, 'input_too_large', `the upload is larger than the limit of ${limit} bytes`, { closeConnection: true });
}

export interface BodyBounds {
  /** The most bytes the body may have. */
  maxBodyBytes: number;
  /** The limit the 413's message names (the upload's, which the body bound is made from). */
  maxInputBytes: number;
  /** Time allowed to receive the whole body. */
  timeoutMs: number;
}

/**
 * Receives the body through `consume`, which starts reading the request and calls `done` once
 * (with an error, or with what it made), and may return what stops it reading. Before it starts, a declared Content-Length over the
 * bound is refused and a `100 Continue` is sent to a client waiting for one (the route's guards
 * have passed by then). On any error the request is unpiped: the response is sent and the rest of
 * the body drained (drainUnreadBody, server/middleware.ts).
 */
export function receiveBody<T>(ctx: Context, bounds: BodyBounds, consume: (done: (err: unknown, value?: T) => void) => (() => void) | void): Promise<T> {
  const req = ctx.req;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > bounds.maxBodyBytes) return Promise.reject(tooLarge(bounds.maxInputBytes));
  if ((req as unknown as Record<symbol, unknown>)[EXPECTS_CONTINUE] && !ctx.res.headersSent) ctx.res.writeContinue();
  return new Promise<T>((resolve, reject) => {
    let received = 0;
    let settled = false;
    const finish = (err: unknown, value?: T) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.off('data', count);
      req.off('close', onClose);
      stop?.();
      if (err) {
        // Removing the listeners does not stop a flowing request: paused, the socket takes no more
        // of the body until the answer is out and the drain decides how much it reads.
        req.unpipe();
        req.pause();
        reject(err);
      } else {
        resolve(value as T);
      }
    };
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received > bounds.maxBodyBytes) finish(tooLarge(bounds.maxInputBytes));
    };
    const onClose = () => {
      if (!req.complete) finish(new HttpError(400, 'client_closed', 'the client closed the connection before the body was sent'));
    };
    const timer = setTimeout(
      () => finish(new HttpError(408, 'request_timeout', `the request body was not received within ${Math.round(bounds.timeoutMs / 1000)} s`, { closeConnection: true })),
      bounds.timeoutMs,
    );
    // The consumer starts reading synchronously; the counter listens alongside it.
    const stop = consume(finish);
    req.on('data', count);
    req.on('close', onClose);
  });
}
