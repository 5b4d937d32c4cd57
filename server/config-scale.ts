// The settings for running matte as several processes or machines (docs/api.md,
// "Stored results" and "Metrics"): the result store (disk or s3), its quota and presigning, the /metrics key and CORS origins.
// Read by loadConfig (server/config.ts) from the same environment; a bad value is a ConfigError
// naming the variable. config.ts reads it whole; the command's bucket work (cli/bucket.ts) reads
// only s3Connection, the same settings for reaching the object store.
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { ConfigError, flag, httpUrl, integer, present, type Env } from './config-env.js';

export const SCALE_VARIABLES = [
  'MATTE_RESULTS_STORE',
  'MATTE_RESULTS_MAX_BYTES',
  'MATTE_RESULTS_MAX_ENTRIES',
  'MATTE_RESULTS_PRESIGN',
  'MATTE_S3_BUCKET',
  'MATTE_S3_PREFIX',
  'MATTE_S3_ENDPOINT',
  'MATTE_S3_FORCE_PATH_STYLE',
  'MATTE_S3_TIMEOUT_SECONDS',
  'AWS_REGION',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'MATTE_METRICS_KEY',
  'MATTE_METRICS_ADDRESS',
  'MATTE_CORS_ORIGINS',
] as const;

export const RESULT_STORES = ['disk', 's3'] as const;

/** How to reach the object store, whatever the bucket: the result store's and the command's bucket work (cli/bucket.ts). */
export interface S3Connection {
  /** The deadline of one S3 call (MATTE_S3_TIMEOUT_SECONDS). */
  timeoutMs: number;
  /** For S3-compatible stores: http(s)://host[:port]. */
  endpoint?: string;
  forcePathStyle: boolean;
  /** AWS_REGION; without it the SDK's default chain (us-east-1 when an endpoint is given). */
  region?: string;
  /** From AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN); else the SDK's default chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

export interface S3Settings extends S3Connection {
  bucket: string;
  /** Prepended to every key (default "matte-results/"; "/" for the bucket's root). */
  prefix: string;
}

export interface ScaleConfig {
  resultsStore: (typeof RESULT_STORES)[number];
  /** MATTE_RESULTS_MAX_BYTES (default 1 GiB): the space results may take, in whole blocks; 0: no bound. */
  resultsMaxBytes: number;
  /** MATTE_RESULTS_MAX_ENTRIES (default 100,000): how many results the store may hold; 0: no bound. */
  resultsMaxEntries: number;
  resultsPresign: boolean;
  /** Set when resultsStore is s3. */
  s3?: S3Settings;
  /** The key /metrics on the public port requires (never logged); undefined: no /metrics there. */
  metricsKey?: string;
  /** Where /metrics is served without a key (MATTE_METRICS_ADDRESS); undefined: nowhere (`off`). */
  metricsAddress?: { host: string; port: number };
  /** Origins allowed by CORS (`*` for any); empty: no CORS headers. */
  corsOrigins: string[];
}

/**
 * The default results directory: the user's own state directory ($XDG_STATE_HOME/matte/results,
 * else ~/.local/state/matte/results), not a shared temporary directory another user could prepare.
 */
export function defaultResultsDir(env: Env): string {
  const state = present(env, 'XDG_STATE_HOME');
  const base = state !== undefined && isAbsolute(state) ? state : join(present(env, 'HOME') ?? homedir(), '.local', 'state');
  return join(base, 'matte', 'results');
}

/** The default result quota: finite, so that one key holder cannot fill the disk or the bucket. */
export const DEFAULT_RESULTS_MAX_BYTES = 1024 * 1024 * 1024;

/**
 * The default number of results: finite, so that tiny results cannot take a volume's inodes (a
 * million 44-byte results fit in 1 GiB of bytes, not of blocks, and ext4 makes an inode for every
 * 16 KiB); 1 GiB / 100,000 is about 10 KB a result, so for ordinary images the space binds first.
 */
export const DEFAULT_RESULTS_MAX_ENTRIES = 100_000;

/** The default key prefix: a bucket's root may hold other applications' objects. */
export const DEFAULT_S3_PREFIX = 'matte-results/';

// S3 bucket names (and the looser ones of S3-compatible stores): 3..63 of a-z 0-9 . - _
export const BUCKET_NAME = /^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/;

function s3Settings(env: Env): S3Settings {
  const bucket = present(env, 'MATTE_S3_BUCKET');
  if (bucket === undefined) throw new ConfigError('MATTE_S3_BUCKET is required with MATTE_RESULTS_STORE=s3');
  if (!BUCKET_NAME.test(bucket)) throw new ConfigError(`MATTE_S3_BUCKET=${JSON.stringify(bucket)} is not a bucket name (3..63 of a-z, 0-9, '.', '-')`);
  const prefix = (present(env, 'MATTE_S3_PREFIX') ?? DEFAULT_S3_PREFIX).replace(/^\/+/, '');
  if (prefix.length > 512) throw new ConfigError('MATTE_S3_PREFIX is longer than 512 characters');
  return { bucket, prefix, ...s3Connection(env) };
}

/** MATTE_S3_ENDPOINT, MATTE_S3_FORCE_PATH_STYLE, MATTE_S3_TIMEOUT_SECONDS and the AWS_ variables. */
export function s3Connection(env: Env): S3Connection {
  let endpoint: string | undefined;
  const url = httpUrl(env, 'MATTE_S3_ENDPOINT', 'http://127.0.0.1:9000');
  if (url !== undefined) {
    if (url.username || url.password || url.search || url.hash) throw new ConfigError('MATTE_S3_ENDPOINT must not hold credentials, a query or a fragment (credentials go in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)');
    endpoint = url.href.replace(/\/+$/, '');
  }
  const accessKeyId = present(env, 'AWS_ACCESS_KEY_ID');
  const secretAccessKey = present(env, 'AWS_SECRET_ACCESS_KEY');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together: set both, or neither (the SDK\'s default credential chain)');
  }
  const sessionToken = present(env, 'AWS_SESSION_TOKEN');
  return {
    endpoint,
    forcePathStyle: flag(env, 'MATTE_S3_FORCE_PATH_STYLE'),
    timeoutMs: integer(env, 'MATTE_S3_TIMEOUT_SECONDS', 30, 1, 3600) * 1000,
    region: present(env, 'AWS_REGION'),
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } : undefined,
  };
}

/** MATTE_METRICS_ADDRESS: `host:port` or `[v6]:port` (port 0: any free one), or `off`; default 127.0.0.1:9464. */
function metricsAddress(env: Env): { host: string; port: number } | undefined {
  const text = present(env, 'MATTE_METRICS_ADDRESS') ?? '127.0.0.1:9464';
  if (text.toLowerCase() === 'off') return undefined;
  const match = /^\[([0-9a-fA-F:.]+)\]:(\d{1,5})$/.exec(text) ?? /^([^:\s]+):(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (!match || port > 65535) throw new ConfigError(`MATTE_METRICS_ADDRESS=${JSON.stringify(text)} is not host:port (e.g. 127.0.0.1:9464, [::1]:9464, 0.0.0.0:9464) or off`);
  return { host: match[1]!, port };
}

function corsOrigins(env: Env): string[] {
  const text = present(env, 'MATTE_CORS_ORIGINS');
  if (text === undefined) return [];
  const origins = text
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  return origins.map((origin) => {
    if (origin === '*') return origin;
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      // reported below
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin.replace(/\/$/, '').toLowerCase()) {
      throw new ConfigError(`MATTE_CORS_ORIGINS: ${JSON.stringify(origin)} is not an origin (expected scheme://host[:port], e.g. https://app.example.com, or *)`);
    }
    return url.origin;
  });
}

export function loadScaleConfig(env: Env): ScaleConfig {
  const store = (present(env, 'MATTE_RESULTS_STORE') ?? 'disk').toLowerCase();
  if (!(RESULT_STORES as readonly string[]).includes(store)) {
    throw new ConfigError(`MATTE_RESULTS_STORE=${JSON.stringify(store)} is not one of ${RESULT_STORES.join(', ')}`);
  }
  const resultsPresign = flag(env, 'MATTE_RESULTS_PRESIGN');
  if (resultsPresign && store !== 's3') throw new ConfigError('MATTE_RESULTS_PRESIGN=1 needs MATTE_RESULTS_STORE=s3 (a directory has no presigned URLs)');
  const metricsKey = present(env, 'MATTE_METRICS_KEY');
  if (metricsKey !== undefined && !/^[\x21-\x7e]+$/.test(metricsKey)) throw new ConfigError('MATTE_METRICS_KEY holds a space or a non-ASCII character (it is sent in an HTTP header)');
  return {
    resultsStore: store as ScaleConfig['resultsStore'],
    resultsMaxBytes: integer(env, 'MATTE_RESULTS_MAX_BYTES', DEFAULT_RESULTS_MAX_BYTES, 0, Number.MAX_SAFE_INTEGER),
    resultsMaxEntries: integer(env, 'MATTE_RESULTS_MAX_ENTRIES', DEFAULT_RESULTS_MAX_ENTRIES, 0, Number.MAX_SAFE_INTEGER),
    resultsPresign,
    s3: store === 's3' ? s3Settings(env) : undefined,
    metricsKey,
    metricsAddress: metricsAddress(env),
    corsOrigins: corsOrigins(env),
  };
}
