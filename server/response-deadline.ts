// The idle deadline of a response (MATTE_IDLE_TIMEOUT_SECONDS): once a handler has answered, the
// client must keep reading. A response none of whose bytes reach the client's connection for that
// long is cut (its socket destroyed), which releases what it holds: the result's buffer, an open
// file or an object store's socket. Progress is what the kernel takes from the socket: it wakes a
// writer only once a good part of its send buffer is free, so a client reading slower than about
// that part per idle period (a few MB) looks idle too; at the default 30 s that is under ~100 KB/s.
import type { Context, Next } from 'koa';

/** Bytes the kernel has taken from the socket so far (written, minus what still waits in Node). */
function bytesSent(socket: { bytesWritten: number; writableLength: number }): number {
  return socket.bytesWritten - socket.writableLength;
}

export function idleResponseDeadline(idleMs: number) {
  const every = Math.max(50, Math.floor(idleMs / 4));
  return async (ctx: Context, next: Next) => {
    await next();
    // Koa writes the body once the middleware has returned: from here the client has to read.
    const socket = ctx.req.socket;
    if (!socket || socket.destroyed) return;
    const res = ctx.res;
    let sent = bytesSent(socket);
    let progressAt = Date.now();
    const timer = setInterval(() => {
      if (res.writableFinished || socket.destroyed) {
        clearInterval(timer);
        return;
      }
      const now = bytesSent(socket);
      if (now !== sent) {
        sent = now;
        progressAt = Date.now();
      } else if (Date.now() - progressAt >= idleMs) {
        clearInterval(timer);
        ctx.state.idleCut = true;
        socket.destroy();
      }
    }, every);
    timer.unref();
    res.once('close', () => clearInterval(timer));
  };
}
