// Every setting of the server, read from the environment in one place and validated at start-up.
// A bad value stops the server with a message that names the variable, the value and what is
// expected (ConfigError). Nothing else in server/ reads process.env.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';
import { isAbsolute, join } from 'node:path';
import { DEFAULT_LIMITS, LIMIT_BOUNDS } from '../lib/limits.js';
import type { ModelEntry } from '../lib/models.js';
import { MODEL_NAME } from '../lib/schema.js';
import { defaultResultsDir, loadScaleConfig, SCALE_VARIABLES, type ScaleConfig } from './config-scale.js';
import { ConfigError, flag, httpUrl, integer, present, type Env } from './config-env.js';
import { CDN_VARIABLES, loadCdnConfig, type CdnConfig } from './config-cdn.js';
import { DIALECT_VARIABLES, loadDialectConfig, type DialectConfig } from './config-dialects.js';
import { loadProxyConfig, PROXY_VARIABLES, type ProxyConfig } from './config-proxy.js';

export { ConfigError, type Env } from './config-env.js';

export const MAX_RESULT_TTL_SECONDS = 86_400;
export const MIB = 1024 * 1024;

export interface Config extends ScaleConfig, CdnConfig, ProxyConfig, DialectConfig {
  port: number;
  host: string;
  /** Absolute base of result URLs, no trailing slash. */
  publicUrl: string;
  /** Whether MATTE_PUBLIC_URL was set (else publicUrl follows the port actually bound). */
  publicUrlExplicit: boolean;
  /** Accepted API keys (never logged). */
  apiKeys: string[];
  /** The key generated because none was configured (printed once at start-up), else undefined. */
  generatedKey?: string;
  /** Wrong keys allowed per address and minute before 429 (MATTE_AUTH_FAILURES_PER_MINUTE); 0: no limit. */
  authFailuresPerMinute: number;
  resultsDir: string;
  resultTtlSeconds: number;
  maxInputBytes: number;
  maxInputPixels: number;
  maxAnimationFrames: number;
  maxMatteFrames: number;
  concurrency: number;
  /** At most this many libvips and ONNX Runtime threads for one job (MATTE_JOB_THREADS; undefined: every core). */
  jobThreads?: number;
  queueLimit: number;
  allowPrivateUrls: boolean;
  /** The ports URL inputs may name (MATTE_URL_PORTS): inclusive ranges, or `*` for any. */
  urlPorts: Array<[number, number]> | '*';
  urlFetchTimeoutMs: number;
  /** URL inputs fetched at once; beyond it, 503 overloaded. */
  maxUrlFetches: number;
  /** DNS servers of the URL fetcher (undefined: the system's, from /etc/resolv.conf). */
  dnsServers?: string[];
  /** Time allowed to receive a whole request body. */
  requestTimeoutMs: number;
  /** A response whose client reads nothing for this long is cut (MATTE_IDLE_TIMEOUT_SECONDS). */
  idleTimeoutMs: number;
  shutdownTimeoutMs: number;
  /** The time budget of one image job (MATTE_JOB_TIMEOUT_SECONDS), from when it starts running. */
  jobTimeoutMs: number;
  /** Names of the models loaded at start, the first the default (undefined: the registry default). */
  models?: string[];
  /** Custom model entries (MATTE_MODELS_FILE), each with the path of its file. */
  customModels: Record<string, ModelEntry & { path: string }>;
  /** Where fetched models are kept (undefined: lib's default, ~/.cache/matte/models). */
  modelsDir?: string;
  logLevel: string;
  /** The remove.bg-compatible routes (MATTE_REMOVEBG_API: on by default, `off` turns them off: 404). */
  removebgApi: boolean;
}

/** Every variable the server reads (docs/configuration.md's table has one row for each). */
export const CONFIG_VARIABLES = [
  'PORT',
  'HOST',
  'MATTE_PUBLIC_URL',
  'MATTE_API_KEYS',
  'MATTE_API_KEYS_FILE',
  'MATTE_AUTH_FAILURES_PER_MINUTE',
  'MATTE_RESULTS_DIR',
  'MATTE_RESULT_TTL_SECONDS',
  'MATTE_MAX_INPUT_BYTES',
  'MATTE_MAX_INPUT_PIXELS',
  'MATTE_MAX_ANIMATION_FRAMES',
  'MATTE_MAX_MATTE_FRAMES',
  'MATTE_CONCURRENCY',
  'MATTE_JOB_THREADS',
  'MATTE_QUEUE_LIMIT',
  'MATTE_ALLOW_PRIVATE_URLS',
  'MATTE_URL_PORTS',
  'MATTE_URL_FETCH_TIMEOUT_SECONDS',
  'MATTE_MAX_URL_FETCHES',
  'MATTE_DNS_SERVERS',
  'MATTE_REQUEST_TIMEOUT_SECONDS',
  'MATTE_IDLE_TIMEOUT_SECONDS',
  'MATTE_SHUTDOWN_TIMEOUT_SECONDS',
  'MATTE_JOB_TIMEOUT_SECONDS',
  'MATTE_MODEL',
  'MATTE_MODELS',
  'MATTE_MODELS_FILE',
  'MATTE_MODELS_DIR',
  'MATTE_LOG_LEVEL',
  'MATTE_REMOVEBG_API',
  'UV_THREADPOOL_SIZE',
  ...SCALE_VARIABLES,
  ...CDN_VARIABLES,
  ...PROXY_VARIABLES,
  ...DIALECT_VARIABLES,
] as const;

function splitKeys(text: string): string[] {
  return text
    .split(/[,\n\r]/)
    .map((k) => k.trim())
    .filter((k) => k.length > 0 && !k.startsWith('#'));
}

/** MATTE_DNS_SERVERS: comma-separated `ip`, `ip:port` or `[ipv6]:port` (dns.Resolver#setServers forms). */
function dnsServerList(env: Env): string[] | undefined {
  const text = present(env, 'MATTE_DNS_SERVERS');
  if (text === undefined) return undefined;
  const servers = text.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  for (const server of servers) {
    const match = /^\[([^\]]+)\](?::(\d+))?$/.exec(server) ?? /^([^:]+)(?::(\d+))?$/.exec(server) ?? [server, server, undefined];
    const [, host, port] = match;
    const okPort = port === undefined || (Number(port) >= 1 && Number(port) <= 65535);
    if (!isIP(host ?? '') || !okPort) {
      throw new ConfigError(`MATTE_DNS_SERVERS: ${JSON.stringify(server)} is not an IP address with an optional port (e.g. 10.0.0.2, 10.0.0.2:53, [fd00::2]:53)`);
    }
  }
  if (servers.length === 0) throw new ConfigError('MATTE_DNS_SERVERS holds no server');
  return servers;
}

/** MATTE_URL_PORTS: `*`, or comma-separated ports and ranges (`80,443,8000-8999`); default 80 and 443. */
function urlPortList(env: Env): Array<[number, number]> | '*' {
  const text = present(env, 'MATTE_URL_PORTS');
  if (text === undefined) return [[80, 80], [443, 443]];
  if (text === '*') return '*';
  const ranges: Array<[number, number]> = [];
  for (const item of text.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const match = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(item);
    const low = Number(match?.[1]);
    const high = match?.[2] === undefined ? low : Number(match[2]);
    if (!match || low < 1 || high > 65535 || high < low) {
      throw new ConfigError(`MATTE_URL_PORTS: ${JSON.stringify(item)} is not a port or a range of ports (expected e.g. 80,443,8000-8999, or *)`);
    }
    ranges.push([low, high]);
  }
  if (ranges.length === 0) throw new ConfigError('MATTE_URL_PORTS holds no port (expected e.g. 80,443,8000-8999, or *)');
  return ranges;
}

/** Whether a URL input may name `port` under MATTE_URL_PORTS. */
export function urlPortAllowed(ports: Config['urlPorts'], port: number): boolean {
  return ports === '*' || ports.some(([low, high]) => port >= low && port <= high);
}

/** http://HOST:PORT, with `localhost` for an all-interfaces HOST and brackets for IPv6. */
export function defaultPublicUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Reads and validates the whole configuration. Throws ConfigError with a message naming the
 * variable for any bad value. `cores` is injectable for tests.
 */
export function loadConfig(env: Env = process.env, cores = availableParallelism()): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const host = present(env, 'HOST') ?? '127.0.0.1';

  let publicUrl: string | undefined;
  const parsed = httpUrl(env, 'MATTE_PUBLIC_URL', 'https://img.example.com');
  if (parsed !== undefined) {
    if (parsed.search || parsed.hash) throw new ConfigError('MATTE_PUBLIC_URL must not have a query or a fragment');
    publicUrl = parsed.href.replace(/\/+$/, '');
  }

  const apiKeys: string[] = [];
  const keysText = present(env, 'MATTE_API_KEYS');
  if (keysText !== undefined) apiKeys.push(...splitKeys(keysText));
  const keysFile = present(env, 'MATTE_API_KEYS_FILE');
  if (keysFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(keysFile, 'utf8');
    } catch (err) {
      throw new ConfigError(`MATTE_API_KEYS_FILE=${keysFile} cannot be read (${(err as NodeJS.ErrnoException).code ?? err})`);
    }
    const fromFile = splitKeys(text);
    if (fromFile.length === 0) throw new ConfigError(`MATTE_API_KEYS_FILE=${keysFile} holds no key`);
    apiKeys.push(...fromFile);
  }
  for (const key of apiKeys) {
    if (!/^[\x21-\x7e]+$/.test(key)) throw new ConfigError('an API key holds a space or a non-ASCII character (keys are sent in an HTTP header)');
  }
  let generatedKey: string | undefined;
  if (apiKeys.length === 0) {
    generatedKey = randomBytes(24).toString('base64url'); // 192 bits
    apiKeys.push(generatedKey);
  }

  const authFailuresPerMinute = integer(env, 'MATTE_AUTH_FAILURES_PER_MINUTE', 20, 0, 1_000_000);
  const resultsDir = present(env, 'MATTE_RESULTS_DIR') ?? defaultResultsDir(env);
  const resultTtlSeconds = integer(env, 'MATTE_RESULT_TTL_SECONDS', MAX_RESULT_TTL_SECONDS, 1, MAX_RESULT_TTL_SECONDS);
  const maxInputBytes = integer(env, 'MATTE_MAX_INPUT_BYTES', 25 * MIB, 1, 2 ** 31 - 1);
  // The library's (and the addon's) own bounds: a value they would refuse cannot pass start-up.
  const maxInputPixels = integer(env, 'MATTE_MAX_INPUT_PIXELS', DEFAULT_LIMITS.maxPixels, LIMIT_BOUNDS.maxPixels.min, LIMIT_BOUNDS.maxPixels.max);
  const maxAnimationFrames = integer(env, 'MATTE_MAX_ANIMATION_FRAMES', DEFAULT_LIMITS.maxFrames, LIMIT_BOUNDS.maxFrames.min, LIMIT_BOUNDS.maxFrames.max);
  const maxMatteFrames = integer(env, 'MATTE_MAX_MATTE_FRAMES', DEFAULT_LIMITS.maxMatteFrames, LIMIT_BOUNDS.maxMatteFrames.min, LIMIT_BOUNDS.maxMatteFrames.max);
  const concurrency = integer(env, 'MATTE_CONCURRENCY', Math.max(1, cores), 1, 1024);
  const jobThreads = present(env, 'MATTE_JOB_THREADS') === undefined ? undefined : integer(env, 'MATTE_JOB_THREADS', cores, 1, 1024);
  const queueLimit = integer(env, 'MATTE_QUEUE_LIMIT', 4 * concurrency, 0, 1_000_000);
  const allowPrivateUrls = flag(env, 'MATTE_ALLOW_PRIVATE_URLS');
  const urlPorts = urlPortList(env);
  const urlFetchTimeoutMs = integer(env, 'MATTE_URL_FETCH_TIMEOUT_SECONDS', 10, 1, 3600) * 1000;
  const maxUrlFetches = integer(env, 'MATTE_MAX_URL_FETCHES', Math.max(4, concurrency), 1, 1024);
  const dnsServers = dnsServerList(env);
  const requestTimeoutMs = integer(env, 'MATTE_REQUEST_TIMEOUT_SECONDS', 60, 1, 3600) * 1000;
  const idleTimeoutMs = integer(env, 'MATTE_IDLE_TIMEOUT_SECONDS', 30, 1, 3600) * 1000;
  const shutdownTimeoutMs = integer(env, 'MATTE_SHUTDOWN_TIMEOUT_SECONDS', 30, 0, 3600) * 1000;
  const jobTimeoutMs = integer(env, 'MATTE_JOB_TIMEOUT_SECONDS', 30, 1, 86_400) * 1000;
  const models = modelList(env);
  const customModels = customModelEntries(env);
  const modelsDir = present(env, 'MATTE_MODELS_DIR');
  const logLevel = (present(env, 'MATTE_LOG_LEVEL') ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`MATTE_LOG_LEVEL=${logLevel} is not one of ${LOG_LEVELS.join(', ')}`);

  return {
    port,
    host,
    publicUrl: publicUrl ?? defaultPublicUrl(host, port),
    publicUrlExplicit: publicUrl !== undefined,
    apiKeys,
    generatedKey,
    authFailuresPerMinute,
    resultsDir,
    resultTtlSeconds,
    maxInputBytes,
    maxInputPixels,
    maxAnimationFrames,
    maxMatteFrames,
    concurrency,
    jobThreads,
    queueLimit,
    allowPrivateUrls,
    urlPorts,
    urlFetchTimeoutMs,
    maxUrlFetches,
    dnsServers,
    requestTimeoutMs,
    idleTimeoutMs,
    shutdownTimeoutMs,
    jobTimeoutMs,
    models,
    customModels,
    modelsDir,
    logLevel,
    removebgApi: present(env, 'MATTE_REMOVEBG_API') === undefined || flag(env, 'MATTE_REMOVEBG_API'),
    ...loadScaleConfig(env),
    ...loadCdnConfig(env),
    ...loadProxyConfig(env),
    ...loadDialectConfig(env),
  };
}

/** MATTE_MODELS (comma-separated names) or MATTE_MODEL (one name, the older spelling). */
function modelList(env: Env): string[] | undefined {
  const list = present(env, 'MATTE_MODELS');
  const one = present(env, 'MATTE_MODEL');
  if (list !== undefined && one !== undefined) throw new ConfigError('set MATTE_MODELS or MATTE_MODEL, not both (MATTE_MODEL=name is MATTE_MODELS=name)');
  const variable = list !== undefined ? 'MATTE_MODELS' : 'MATTE_MODEL';
  const text = list ?? one;
  if (text === undefined) return undefined;
  const names = text.split(',').map((n) => n.trim());
  for (const name of names) {
    if (!MODEL_NAME.test(name)) throw new ConfigError(`${variable}=${text}: "${name}" is not a model name (letters, digits, . _ -)`);
  }
  if (new Set(names).size !== names.length) throw new ConfigError(`${variable}=${text} names a model twice`);
  return names;
}

/**
 * MATTE_MODELS_FILE: a JSON file {"models": {"name": {<registry entry>, "path": "/abs/model.onnx"}}}
 * adding models that are not in models/registry.json (their sha256 is checked like any other).
 * The entries' contents are checked when each model loads (model_error naming the entry).
 */
function customModelEntries(env: Env): Record<string, ModelEntry & { path: string }> {
  const file = present(env, 'MATTE_MODELS_FILE');
  if (file === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`MATTE_MODELS_FILE=${file} cannot be read as JSON: ${(err as Error).message}`);
  }
  const models = (parsed as { models?: unknown })?.models;
  if (!models || typeof models !== 'object' || Array.isArray(models)) {
    throw new ConfigError(`MATTE_MODELS_FILE=${file} must hold {"models": {"<name>": {...entry, "path": "/abs/file.onnx"}}}`);
  }
  // No prototype: a model named `__proto__` is an entry like any other, not the object's prototype.
  const entries: Record<string, ModelEntry & { path: string }> = Object.create(null);
  for (const [name, entry] of Object.entries(models as Record<string, unknown>)) {
    const e = entry as Partial<ModelEntry & { path: string }>;
    if (!MODEL_NAME.test(name)) throw new ConfigError(`MATTE_MODELS_FILE=${file}: "${name}" is not a model name (letters, digits, . _ -)`);
    if (!e || typeof e !== 'object' || typeof e.path !== 'string' || !isAbsolute(e.path) || typeof e.sha256 !== 'string' || !e.input || !e.output) {
      throw new ConfigError(`MATTE_MODELS_FILE=${file}: entry "${name}" needs an absolute "path", "sha256", "input" and "output"`);
    }
    entries[name] = e as ModelEntry & { path: string };
  }
  return entries;
}

/** The libuv thread pool the server wants: each running job holds one thread, files and DNS need some too. */
export function wantedThreadPoolSize(config: Pick<Config, 'concurrency'>): number {
  return Math.max(4, config.concurrency + 2);
}
