// CORS for browser clients (@koa/cors), only when MATTE_CORS_ORIGINS is set (default: no CORS
// headers at all). A preflight (OPTIONS with Access-Control-Request-Method) is answered here, before
// the API key is checked: browsers send it without custom headers. X-Api-Key may be sent; the
// result's size and the request id may be read. No credentials (cookies) are involved: the key is
// a header. Placed before the error handler, which keeps the Access-Control-* headers on errors
// so that a browser can read a 401 or 503 body too.
import cors from '@koa/cors';
import type { Context, Middleware } from 'koa';

export const CORS_ALLOWED_HEADERS = ['X-Api-Key', 'Content-Type', 'X-Request-Id', 'Range', 'If-None-Match', 'If-Range'];
export const CORS_EXPOSED_HEADERS = [
  'X-Image-Width',
  'X-Image-Height',
  'X-Request-Id',
  'Content-Length',
  'Content-Range',
  'ETag',
  'Retry-After',
  // The remove.bg-compatible route's answer (a browser plugin written for remove.bg reads them).
  'X-Width',
  'X-Height',
  'X-Foreground-Top',
  'X-Foreground-Left',
  'X-Foreground-Width',
  'X-Foreground-Height',
  'X-Credits-Charged',
  'X-Type',
];

/** The CORS middleware for these origins (`*`: any), or undefined when there are none. */
export function corsMiddleware(origins: readonly string[]): Middleware | undefined {
  if (origins.length === 0) return undefined;
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return cors({
    origin: (ctx: Context) => {
      const origin = ctx.get('Origin');
      if (!origin) return '';
      return any ? '*' : allowed.has(origin) ? origin : '';
    },
    allowMethods: ['GET', 'HEAD', 'POST', 'OPTIONS'],
    allowHeaders: CORS_ALLOWED_HEADERS,
    exposeHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
    keepHeadersOnError: false,
  });
}
