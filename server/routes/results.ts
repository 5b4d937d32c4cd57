// GET and HEAD /images/results/{id}.{ext}: the download of a `url` result (docs/api.md, "Stored results").
// No API key: the unguessable id is the capability. Exact bytes, Content-Type, Content-Length,
// ETag (If-None-Match gives 304), Cache-Control private with the seconds left, Content-Disposition
// inline, single byte ranges (206, 416; If-Range honoured; several ranges are answered whole).
// Unknown, expired or wrong-extension: 404 not_found.
import type Router from '@koa/router';
import { HttpError } from '../errors.js';
import type { Services } from '../services.js';
import { setImageSafetyHeaders } from './images.js';

/** The longest Range header parsed (two 16-digit offsets and the unit fit many times over). */
const MAX_RANGE_HEADER = 200;

export type RangeResult = { start: number; end: number } | 'unsatisfiable' | undefined;

/** Parses a Range header against a size: a range, 'unsatisfiable', or undefined (serve it whole). */
export function parseRange(header: string | undefined, size: number): RangeResult {
  // A single range is a few dozen characters; a longer header is served whole without parsing.
  if (!header || header.length > MAX_RANGE_HEADER) return undefined;
  // Whitespace removed first: optional spaces around every token, as one pattern, backtrack
  // quadratically on a long run of spaces.
  const match = /^bytes=(\d*)-(\d*)$/i.exec(header.replace(/\s+/g, ''));
  if (!match) return undefined; // several ranges or another unit: ignored, the whole is sent
  const [, first, last] = match as unknown as [string, string, string];
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Number(last);
  if (last !== '' && end < start) return undefined; // invalid: ignored
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}

/** If-None-Match evaluated as an origin server does (RFC 9110 13.1.2: weak comparison, `*`). */
export function matchesEtag(header: string, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => bare(tag) === bare(etag));
}

const notFound = () => new HttpError(404, 'not_found', 'no such result: it expired or never existed');
const throwNotFound = (): never => {
  throw notFound();
};

export function resultsRoute(router: Router, services: Services): void {
  router.get('/images/results/:name', async (ctx) => {
    const name = String(ctx.params.name);
    const dot = name.lastIndexOf('.');
    if (dot <= 0) throw notFound();
    const result = await services.store.get(name.slice(0, dot), name.slice(dot + 1));
    if (!result) throw notFound();

    const secondsLeft = Math.max(0, Math.floor((result.expiresAt - Date.now()) / 1000));
    ctx.set('ETag', result.etag);
    ctx.set('Cache-Control', `private, max-age=${secondsLeft}`);
    ctx.set('Expires', new Date(result.expiresAt).toUTCString());
    ctx.set('Content-Disposition', `inline; filename="${result.id}.${result.ext}"`);
    ctx.set('Accept-Ranges', 'bytes');
    setImageSafetyHeaders(ctx);
    ctx.type = result.mediaType;

    if (matchesEtag(ctx.get('If-None-Match'), result.etag)) {
      ctx.status = 304;
      return;
    }
    const ifRange = ctx.get('If-Range');
    const range = ifRange && ifRange !== result.etag ? undefined : parseRange(ctx.get('Range') || undefined, result.size);
    if (range === 'unsatisfiable') {
      throw new HttpError(416, 'range_not_satisfiable', `the range is outside the ${result.size} bytes of the result`, {
        headers: { 'Content-Range': `bytes */${result.size}` },
      });
    }
    if (range) {
      ctx.status = 206;
      ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${result.size}`);
      if (ctx.method !== 'HEAD') ctx.body = (await services.store.read(result, range)) ?? throwNotFound();
      ctx.length = range.end - range.start + 1;
      return;
    }
    // For HEAD no file is opened: Koa sends the status and headers only.
    ctx.status = 200;
    if (ctx.method !== 'HEAD') ctx.body = (await services.store.read(result)) ?? throwNotFound();
    ctx.length = result.size;
  });
}
