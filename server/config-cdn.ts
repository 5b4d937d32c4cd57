// The settings for serving behind a CDN (docs/api.md, "Signed URLs" and "The matte cache"): the
// keys of signed GET URLs, the lifetime their answers advertise, the formats `auto` may choose on
// GET routes, and the matte cache's bounds.
// Read by loadConfig (server/config.ts) from the same environment; a bad value is a ConfigError.
import { MIN_SIGNING_KEY_LENGTH } from '../lib/signed-url.js';
import { ConfigError, integer, present, type Env } from './config-env.js';
import { NEGOTIATED_FORMATS, type NegotiatedFormat } from './negotiate-format.js';

export const CDN_VARIABLES = [
  'MATTE_URL_SIGNING_KEYS',
  'MATTE_SIGNED_MAX_AGE_SECONDS',
  'MATTE_AUTO_FORMATS',
  'MATTE_MATTE_CACHE_MAX_BYTES',
  'MATTE_MATTE_CACHE_MAX_ENTRIES',
  'MATTE_MATTE_CACHE_TTL_SECONDS',
] as const;

/** A year: what `immutable` content usually advertises. */
export const DEFAULT_SIGNED_MAX_AGE_SECONDS = 31_536_000;
export const DEFAULT_MATTE_CACHE_MAX_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_MATTE_CACHE_TTL_SECONDS = 7 * 86_400;
/** As for results (config-scale.ts): a bound on the files (objects) the cache makes, whatever their size. */
export const DEFAULT_MATTE_CACHE_MAX_ENTRIES = 100_000;

export interface CdnConfig {
  /** Keys that sign GET URLs, the first the current one; empty: the signed route is off (404). */
  urlSigningKeys: string[];
  /** max-age of a signed URL's answer. */
  signedMaxAgeSeconds: number;
  /** The formats `auto` may choose on the GET routes by the request's Accept (MATTE_AUTO_FORMATS); beside them PNG or JPEG. */
  autoFormats: NegotiatedFormat[];
  /** The matte cache's bound in the result store (space, in whole blocks); 0: no matte cache. */
  matteCacheMaxBytes: number;
  /** How many entries the matte cache may hold (1 at least). */
  matteCacheMaxEntries: number;
  matteCacheTtlSeconds: number;
}

function signingKeys(env: Env): string[] {
  const text = present(env, 'MATTE_URL_SIGNING_KEYS');
  if (text === undefined) return [];
  const keys = text.split(',').map((k) => k.trim()).filter((k) => k !== '');
  for (const key of keys) {
    if (!/^[\x21-\x7e]+$/.test(key)) throw new ConfigError('MATTE_URL_SIGNING_KEYS: a key holds a space or a non-ASCII character');
    if (key.length < MIN_SIGNING_KEY_LENGTH) {
      throw new ConfigError(`MATTE_URL_SIGNING_KEYS: a key is shorter than ${MIN_SIGNING_KEY_LENGTH} characters (make one with: openssl rand -base64 32)`);
    }
  }
  return keys;
}

/** `avif,webp` (the default), `webp`, or `none`: AVIF encodes cost several times WebP's, so a server may leave AVIF out. */
function autoFormats(env: Env): NegotiatedFormat[] {
  const text = present(env, 'MATTE_AUTO_FORMATS');
  if (text === undefined) return [...NEGOTIATED_FORMATS];
  if (text.trim().toLowerCase() === 'none') return [];
  const names = text.split(',').map((f) => f.trim().toLowerCase()).filter((f) => f !== '');
  for (const name of names) {
    if (!(NEGOTIATED_FORMATS as readonly string[]).includes(name)) {
      throw new ConfigError(`MATTE_AUTO_FORMATS: "${name}" is not one of ${NEGOTIATED_FORMATS.join(', ')} (or none: PNG and JPEG only)`);
    }
  }
  return NEGOTIATED_FORMATS.filter((f) => names.includes(f));
}

export function loadCdnConfig(env: Env): CdnConfig {
  return {
    urlSigningKeys: signingKeys(env),
    autoFormats: autoFormats(env),
    signedMaxAgeSeconds: integer(env, 'MATTE_SIGNED_MAX_AGE_SECONDS', DEFAULT_SIGNED_MAX_AGE_SECONDS, 0, 10 * DEFAULT_SIGNED_MAX_AGE_SECONDS),
    matteCacheMaxBytes: integer(env, 'MATTE_MATTE_CACHE_MAX_BYTES', DEFAULT_MATTE_CACHE_MAX_BYTES, 0, Number.MAX_SAFE_INTEGER),
    matteCacheMaxEntries: integer(env, 'MATTE_MATTE_CACHE_MAX_ENTRIES', DEFAULT_MATTE_CACHE_MAX_ENTRIES, 1, Number.MAX_SAFE_INTEGER),
    matteCacheTtlSeconds: integer(env, 'MATTE_MATTE_CACHE_TTL_SECONDS', DEFAULT_MATTE_CACHE_TTL_SECONDS, 1, 365 * 86_400),
  };
}
