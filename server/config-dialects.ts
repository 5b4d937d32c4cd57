// The settings of the foreign URL dialects (docs/api.md, "Image URLs of other servers") and of the
// result cache: where their sources may come from, imgproxy's keys, salts and presets, the
// lifetime their answers advertise, and the result cache's bounds. Read by loadConfig
// (server/config.ts) from the same environment; a bad value is a ConfigError naming the variable.
import { ConfigError, flag, httpUrl, integer, present, type Env } from './config-env.js';

export const DIALECT_VARIABLES = [
  'MATTE_SOURCE_BASE',
  'MATTE_SOURCES',
  'MATTE_DIALECT_MAX_AGE',
  'MATTE_IMGPROXY_KEY',
  'MATTE_IMGPROXY_SALT',
  'MATTE_IMGPROXY_SIGNATURE_SIZE',
  'MATTE_IMGPROXY_PREFIX',
  'MATTE_IMGPROXY_INSECURE',
  'MATTE_IMGPROXY_PRESETS',
  'MATTE_RESULT_CACHE_MAX_BYTES',
  'MATTE_RESULT_CACHE_MAX_ENTRIES',
  'MATTE_RESULT_CACHE_TTL_SECONDS',
] as const;

export const DEFAULT_DIALECT_MAX_AGE_SECONDS = 3600;
export const DEFAULT_RESULT_CACHE_MAX_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_RESULT_CACHE_MAX_ENTRIES = 100_000;
export const DEFAULT_RESULT_CACHE_TTL_SECONDS = 7 * 86_400;
/** imgproxy's own signature size: the whole HMAC-SHA256. */
export const MAX_IMGPROXY_SIGNATURE_SIZE = 32;
/** The fewest bytes an imgproxy key may have: a shorter HMAC key can be searched for from one signed URL. */
export const MIN_IMGPROXY_KEY_BYTES = 16;

/** One imgproxy key and its salt (IMGPROXY_KEY / IMGPROXY_SALT: bytes given in hex). */
export interface ImgproxyKey {
  key: Buffer;
  salt: Buffer;
}

export interface DialectConfig {
  /** Where a relative source (`/uploads/a.jpg`, an IPX id) is fetched from; undefined: relative sources are refused. */
  sourceBase?: URL;
  /** The prefixes an absolute source must start with (normalised hrefs); empty: unsigned dialects take no absolute source. */
  sources: string[];
  /** max-age of the unsigned dialects' answers (and of imgproxy's insecure URLs). */
  dialectMaxAgeSeconds: number;
  /** imgproxy's key/salt pairs, the first signing; empty: no signed imgproxy URL is accepted. */
  imgproxyKeys: ImgproxyKey[];
  /** Bytes of the HMAC an imgproxy signature carries (1..32). */
  imgproxySignatureSize: number;
  /** The path imgproxy's URLs start after ('' : the host's root, after matte's own routes). */
  imgproxyPrefix: string;
  /** Whether `insecure` / `unsafe` stand for a signature (unsigned imgproxy URLs). */
  imgproxyInsecure: boolean;
  /** imgproxy's presets by name: the option segments each stands for (`default` applies to every URL). */
  imgproxyPresets: Record<string, string[]>;
  /** The result cache's bound in the result store (space, in whole blocks); 0: no result cache. */
  resultCacheMaxBytes: number;
  resultCacheMaxEntries: number;
  resultCacheTtlSeconds: number;
}

function hexList(env: Env, name: string): Buffer[] {
  const text = present(env, name);
  if (text === undefined) return [];
  return text.split(',').map((part) => {
    const hex = part.trim();
    if (!/^(?:[0-9a-fA-F]{2})+$/.test(hex)) throw new ConfigError(`${name}: every value must be hexadecimal bytes (an even number of 0-9 a-f), as imgproxy's`);
    return Buffer.from(hex, 'hex');
  });
}

function imgproxyKeys(env: Env): ImgproxyKey[] {
  const keys = hexList(env, 'MATTE_IMGPROXY_KEY');
  const salts = hexList(env, 'MATTE_IMGPROXY_SALT');
  if (keys.length !== salts.length) {
    throw new ConfigError(`MATTE_IMGPROXY_KEY and MATTE_IMGPROXY_SALT must list as many values (${keys.length} keys, ${salts.length} salts): one salt a key`);
  }
  for (const key of keys) {
    if (key.length < MIN_IMGPROXY_KEY_BYTES) {
      throw new ConfigError(`MATTE_IMGPROXY_KEY: a key is shorter than ${MIN_IMGPROXY_KEY_BYTES} bytes (make one with: openssl rand -hex 32)`);
    }
  }
  return keys.map((key, i) => ({ key, salt: salts[i]! }));
}

function sourcePrefixes(env: Env): string[] {
  const text = present(env, 'MATTE_SOURCES');
  if (text === undefined) return [];
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => {
      const url = httpUrl({ MATTE_SOURCES: s }, 'MATTE_SOURCES', 'https://cdn.example.com/images/');
      if (url!.search || url!.hash || url!.username || url!.password) throw new ConfigError(`MATTE_SOURCES: ${JSON.stringify(s)} must be a URL prefix without credentials, query or fragment`);
      return url!.href;
    });
}

function sourceBase(env: Env): URL | undefined {
  const url = httpUrl(env, 'MATTE_SOURCE_BASE', 'https://shop.example.com/');
  if (url && (url.search || url.hash || url.username || url.password)) throw new ConfigError('MATTE_SOURCE_BASE must be a URL without credentials, query or fragment');
  if (url && !url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

function imgproxyPrefix(env: Env): string {
  const text = present(env, 'MATTE_IMGPROXY_PREFIX');
  if (text === undefined || text === '/') return '';
  if (!/^(?:\/[A-Za-z0-9._~-]+)+\/?$/.test(text)) throw new ConfigError(`MATTE_IMGPROXY_PREFIX=${JSON.stringify(text)} must be a path such as /imgproxy`);
  return text.replace(/\/$/, '');
}

/** IMGPROXY_PRESETS' form: `name=option/option,name2=option`. */
function imgproxyPresets(env: Env): Record<string, string[]> {
  const text = present(env, 'MATTE_IMGPROXY_PRESETS');
  const presets: Record<string, string[]> = Object.create(null);
  if (text === undefined) return presets;
  for (const entry of text.split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const match = /^([A-Za-z0-9_-]+)=(.+)$/.exec(entry);
    if (!match) throw new ConfigError(`MATTE_IMGPROXY_PRESETS: ${JSON.stringify(entry)} is not name=option/option`);
    presets[match[1]!] = match[2]!.split('/').filter((o) => o !== '');
  }
  return presets;
}

export function loadDialectConfig(env: Env): DialectConfig {
  const config: DialectConfig = {
    sourceBase: sourceBase(env),
    sources: sourcePrefixes(env),
    dialectMaxAgeSeconds: integer(env, 'MATTE_DIALECT_MAX_AGE', DEFAULT_DIALECT_MAX_AGE_SECONDS, 0, 10 * 31_536_000),
    imgproxyKeys: imgproxyKeys(env),
    imgproxySignatureSize: integer(env, 'MATTE_IMGPROXY_SIGNATURE_SIZE', MAX_IMGPROXY_SIGNATURE_SIZE, 1, MAX_IMGPROXY_SIGNATURE_SIZE),
    imgproxyPrefix: imgproxyPrefix(env),
    imgproxyInsecure: flag(env, 'MATTE_IMGPROXY_INSECURE'),
    imgproxyPresets: imgproxyPresets(env),
    resultCacheMaxBytes: integer(env, 'MATTE_RESULT_CACHE_MAX_BYTES', DEFAULT_RESULT_CACHE_MAX_BYTES, 0, Number.MAX_SAFE_INTEGER),
    resultCacheMaxEntries: integer(env, 'MATTE_RESULT_CACHE_MAX_ENTRIES', DEFAULT_RESULT_CACHE_MAX_ENTRIES, 1, Number.MAX_SAFE_INTEGER),
    resultCacheTtlSeconds: integer(env, 'MATTE_RESULT_CACHE_TTL_SECONDS', DEFAULT_RESULT_CACHE_TTL_SECONDS, 1, 365 * 86_400),
  };
  // An unsigned image URL must not be a way to make the server fetch anything.
  if (config.imgproxyInsecure && !unsignedSourcesConfigured(config)) {
    throw new ConfigError('MATTE_IMGPROXY_INSECURE=1 needs MATTE_SOURCES or MATTE_SOURCE_BASE: unsigned URLs may only name the sources listed there');
  }
  return config;
}

/** Whether the unsigned dialects (Cloudflare, IPX, imgproxy's insecure URLs) may run: a source is configured. */
export function unsignedSourcesConfigured(config: Pick<DialectConfig, 'sourceBase' | 'sources'>): boolean {
  return config.sourceBase !== undefined || config.sources.length > 0;
}
