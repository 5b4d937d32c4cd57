// The settings for serving behind a CDN (docs/api.md, "Signed URLs" and "The matte cache"): the
// keys of signed GET URLs, the lifetime their answers advertise, and the matte cache's bounds.
// Read by loadConfig (server/config.ts) from the same environment; a bad value is a ConfigError.
import { MIN_SIGNING_KEY_LENGTH } from '../lib/signed-url.js';
import { ConfigError, integer, present, type Env } from './config-env.js';

export const CDN_VARIABLES = [
  'MATTE_URL_SIGNING_KEYS',
  'MATTE_SIGNED_MAX_AGE_SECONDS',
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

export function loadCdnConfig(env: Env): CdnConfig {
  return {
    urlSigningKeys: signingKeys(env),
    signedMaxAgeSeconds: integer(env, 'MATTE_SIGNED_MAX_AGE_SECONDS', DEFAULT_SIGNED_MAX_AGE_SECONDS, 0, 10 * DEFAULT_SIGNED_MAX_AGE_SECONDS),
    matteCacheMaxBytes: integer(env, 'MATTE_MATTE_CACHE_MAX_BYTES', DEFAULT_MATTE_CACHE_MAX_BYTES, 0, Number.MAX_SAFE_INTEGER),
    matteCacheMaxEntries: integer(env, 'MATTE_MATTE_CACHE_MAX_ENTRIES', DEFAULT_MATTE_CACHE_MAX_ENTRIES, 1, Number.MAX_SAFE_INTEGER),
    matteCacheTtlSeconds: integer(env, 'MATTE_MATTE_CACHE_TTL_SECONDS', DEFAULT_MATTE_CACHE_TTL_SECONDS, 1, 365 * 86_400),
  };
}
