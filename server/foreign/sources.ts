// Where a foreign dialect's image comes from (docs/api.md, "Image URLs of other servers",
// "Sources"): a relative source (Cloudflare's `/uploads/a.jpg`, an IPX id, imgproxy's under its
// base URL) is resolved against MATTE_SOURCE_BASE; an absolute one must start with a prefix of
// MATTE_SOURCES, except in a signed imgproxy URL when no prefix is listed (the signature is the
// permission, as in imgproxy). Both are decided on the URL as WHATWG parses it (dot segments,
// credentials and percent-escapes resolved), before anything is fetched; the fetch itself then
// goes through the URL guard like every input URL (server/input/fetch.ts).
import type { DialectConfig } from '../config-dialects.js';
import { HttpError } from '../errors.js';

const ABSOLUTE = /^https?:\/\//i;
/** `https:/host/...`: the form an absolute source takes when a proxy merged the path's `//`. */
const MERGED_SLASHES = /^(https?):\/(?!\/)/i;

export const invalidSource = (message: string) => new HttpError(400, 'invalid_source', message, { path: 'source' });
export const forbiddenSource = (message: string) => new HttpError(403, 'source_forbidden', message, { path: 'source' });

/**
 * The URL to fetch for a dialect's `source` text (already percent-decoded where the dialect says
 * so), or an HttpError: 400 invalid_source (not a URL this server can fetch), 403 source_forbidden
 * (a source the configuration does not allow). `signed`: the URL was signed by a key of the server.
 */
export function resolveSource(text: string, config: Pick<DialectConfig, 'sourceBase' | 'sources'>, signed = false): URL {
  const source = text.replace(MERGED_SLASHES, '$1://');
  if (source === '' || source === '/') throw invalidSource('the image URL names no source');
  if (/^[a-z][a-z0-9+.-]*:/i.test(source) && !ABSOLUTE.test(source)) throw invalidSource('the source must be an http: or https: URL, or a path under MATTE_SOURCE_BASE');
  if (ABSOLUTE.test(source)) {
    let url: URL;
    try {
      url = new URL(source);
    } catch {
      throw invalidSource('the source is not a valid URL');
    }
    if (url.username || url.password) throw invalidSource('the source must not carry credentials');
    url.hash = '';
    if (signed && config.sources.length === 0) return url;
    if (!config.sources.some((prefix) => url.href.startsWith(prefix))) {
      throw forbiddenSource('the source is not under a prefix this server fetches from (MATTE_SOURCES)');
    }
    return url;
  }
  const base = config.sourceBase;
  if (!base) throw forbiddenSource('relative sources need MATTE_SOURCE_BASE');
  let url: URL;
  try {
    url = new URL(source.replace(/^\/+/, ''), base);
  } catch {
    throw invalidSource('the source is not a valid path');
  }
  // `..` segments resolve before this check: a path cannot climb out of the base.
  if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname)) throw forbiddenSource('the source path leaves MATTE_SOURCE_BASE');
  url.hash = '';
  return url;
}
