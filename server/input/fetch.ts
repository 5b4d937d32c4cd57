// The URL fetcher of an `input` URL (docs/api.md, "Input"): every hop's address checked by
// address-guard.ts and pinned for the connection, bounded in time, size and redirects.
import { Resolver } from 'node:dns/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { HttpError } from '../errors.js';
import { overloaded } from '../jobs.js';
import { classifyAddress } from './address-guard.js';

export const MAX_REDIRECTS = 3;

export interface FetchOptions {
  /** Skip the address check (MATTE_ALLOW_PRIVATE_URLS=1). */
  allowPrivate: boolean;
  /** Total time, redirects included. */
  timeoutMs: number;
  maxBytes: number;
  /** Decides whether an address may be connected to; default: classifyAddress(a).allowed. */
  isAllowed?: (address: string) => boolean;
  /** DNS servers to ask (MATTE_DNS_SERVERS); default the system's (/etc/resolv.conf). */
  dnsServers?: string[];
  /** Bounds the fetches running at once (MATTE_MAX_URL_FETCHES); none when absent. */
  slots?: FetchSlots;
  /** Whether a port may be connected to (MATTE_URL_PORTS); default: 80 and 443 only. */
  isAllowedPort?: (port: number) => boolean;
}

/** The ports URL inputs may name when MATTE_URL_PORTS is not set. */
export const DEFAULT_URL_PORTS = [80, 443];

/** A counter of the URL fetches running at once; beyond `max`, 503 overloaded (with Retry-After). */
export class FetchSlots {
  private running = 0;
  constructor(readonly max: number) {}
  /** Takes a slot or throws 503; returns the function that gives it back. */
  take(): () => void {
    if (this.running >= this.max) throw overloaded();
    this.running++;
    let done = false;
    return () => {
      if (!done) {
        done = true;
        this.running--;
      }
    };
  }
}

const fetchFailed = (message: string, cause?: unknown, detail?: string) => new HttpError(422, 'input_url_fetch_failed', message, { path: 'input', cause, detail });

/**
 * The client is told that the fetch failed, not why: an errno or an upstream status would tell a
 * key holder which ports are open behind the guard. The reason goes to the log (`detail`).
 */
const unreachable = (detail: string, cause?: unknown) => fetchFailed('the input URL could not be fetched (the server log has the reason, under this request id)', cause, detail);

/** The port a URL connects to. */
function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** Refuses a URL whose port is not allowed (400 input_url_forbidden), before its host is resolved. */
function checkPort(url: URL, options: FetchOptions): void {
  const port = portOf(url);
  const allowed = options.isAllowedPort ?? ((p: number) => DEFAULT_URL_PORTS.includes(p));
  if (!allowed(port)) {
    throw new HttpError(400, 'input_url_forbidden', 'the input URL names a port that is not allowed (by default only 80 and 443; MATTE_URL_PORTS allows more)', { path: 'input', detail: `port ${port}` });
  }
}

/** Parses the `input` text field: an absolute http: or https: URL (400 otherwise). */
export function parseInputUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new HttpError(400, 'invalid_field', 'input must be an uploaded file or an absolute http: or https: URL', { path: 'input' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new HttpError(400, 'invalid_field', `input URL must be http: or https:, not ${url.protocol}`, { path: 'input' });
  }
  return url;
}

interface Target {
  address: string;
  family: 4 | 6;
}

/**
 * The host's addresses, IPv4 then IPv6, from DNS through c-ares (dns.Resolver): unlike
 * dns.lookup (getaddrinfo) it does not hold a libuv pool thread, which image jobs need, and it
 * stops at the fetch's deadline. /etc/hosts is not read; `localhost` (RFC 6761) is loopback.
 */
async function resolveHost(host: string, options: FetchOptions, signal: AbortSignal, remainingMs: number): Promise<Array<{ address: string; family: number }>> {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];
  const resolver = new Resolver({ timeout: Math.max(1, Math.ceil(remainingMs)), tries: 1 });
  if (options.dnsServers) resolver.setServers(options.dnsServers);
  const cancel = () => resolver.cancel();
  signal.addEventListener('abort', cancel, { once: true });
  try {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
    const addresses = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (addresses.length === 0) {
      const err = [v4, v6].map((r) => (r.status === 'rejected' ? (r.reason as NodeJS.ErrnoException) : undefined)).find((e) => e && e.code !== 'ENODATA');
      if (err) throw err;
    }
    return addresses;
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

/** Resolves the URL's host and checks every address; returns the one to connect to. */
async function resolveTarget(url: URL, options: FetchOptions, signal: AbortSignal, deadline: number): Promise<Target> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: Array<{ address: string; family: number }>;
  const literal = isIP(host);
  if (literal) {
    addresses = [{ address: host, family: literal }];
  } else {
    try {
      addresses = await resolveHost(host, options, signal, deadline - Date.now());
    } catch (err) {
      if (signal.aborted) throw fetchFailed(`fetching the input URL took longer than ${options.timeoutMs / 1000} s (resolving its host)`, err);
      throw fetchFailed('cannot resolve the host of the input URL', err, `DNS: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    if (addresses.length === 0) throw fetchFailed('the host of the input URL has no address');
  }
  if (!options.allowPrivate) {
    const isAllowed = options.isAllowed ?? ((a: string) => classifyAddress(a).allowed);
    for (const { address } of addresses) {
      if (!isAllowed(address)) {
        const range = classifyAddress(address).range;
        throw new HttpError(400, 'input_url_forbidden', "the input URL's host resolves to a non-public address; only public addresses are fetched", { path: 'input', detail: `address range ${range}` });
      }
    }
  }
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** A lookup that answers with the address that was checked: no second DNS query (rebinding). */
function pinnedLookup(target: Target): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;
}

function request(url: URL, target: Target, signal: AbortSignal, validators: Validators | undefined): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const conditional = { ...(validators?.etag ? { 'if-none-match': validators.etag } : {}), ...(validators?.lastModified ? { 'if-modified-since': validators.lastModified } : {}) };
    const req = client.request(url, {
      method: 'GET',
      agent: false,
      lookup: pinnedLookup(target),
      signal,
      headers: { 'user-agent': 'matte/0.1 (+image fetch)', accept: 'image/*', ...conditional },
    });
    req.on('response', resolve);
    req.on('error', reject);
    req.end();
  });
}

async function readCapped(res: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.destroy();
    throw new HttpError(413, 'input_too_large', `the input URL's body is larger than the limit of ${maxBytes} bytes`, { path: 'input' });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      res.destroy();
      throw new HttpError(413, 'input_too_large', `the input URL's body is larger than the limit of ${maxBytes} bytes`, { path: 'input' });
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size);
}

function headersOf(res: IncomingMessage): SourceHeaders {
  const header = (name: string) => (typeof res.headers[name] === 'string' ? (res.headers[name] as string) : undefined);
  return { etag: header('etag'), lastModified: header('last-modified'), cacheControl: header('cache-control') };
}

/**
 * Fetches an input URL: every hop's host resolved and every address checked (400
 * input_url_forbidden), the connection made to the checked address, at most 3 redirects, the whole
 * fetch within `timeoutMs`, the body capped at `maxBytes` while it streams (413). Unreachable,
 * timed out, non-2xx or too many redirects: 422 input_url_fetch_failed.
 */
export async function fetchInputUrl(input: URL, options: FetchOptions): Promise<Buffer> {
  return (await fetchSource(input, options)) as Buffer;
}

/** A source's validators (its ETag and Last-Modified), as it sent them. */
export interface Validators {
  etag?: string;
  lastModified?: string;
}

/** What a source's answer says about caching it: its validators and Cache-Control. */
export interface SourceHeaders extends Validators {
  cacheControl?: string;
}

/** The answer of a conditional fetch: its headers and the body, none when 304 said the source is as validated (its body never read). */
export interface SourceAnswer {
  bytes?: Buffer;
  headers: SourceHeaders;
}

/**
 * fetchInputUrl with the source's headers, conditional when `validators` are given (If-None-Match,
 * If-Modified-Since): a 304 has no bytes. Without validators, the bytes alone.
 */
export async function fetchSource(input: URL, options: FetchOptions): Promise<Buffer>;
export async function fetchSource(input: URL, options: FetchOptions, validators: Validators): Promise<SourceAnswer>;
export async function fetchSource(input: URL, options: FetchOptions, validators?: Validators): Promise<Buffer | SourceAnswer> {
  const release = options.slots?.take();
  const controller = new AbortController();
  const deadline = Date.now() + options.timeoutMs;
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
  let url = input;
  // A body read to its end leaves nothing open, and aborting then would only build the abort
  // errors (a DOMException and the stream's AbortError, stacks and all) for nobody.
  let readToEnd = false;
  try {
    for (let hop = 0; ; hop++) {
      checkPort(url, options);
      const target = await resolveTarget(url, options, controller.signal, deadline);
      if (controller.signal.aborted) throw fetchFailed(`fetching the input URL took longer than ${options.timeoutMs / 1000} s`);
      let res: IncomingMessage;
      try {
        res = await request(url, target, controller.signal, validators);
      } catch (err) {
        if (controller.signal.aborted) throw fetchFailed(`fetching the input URL took longer than ${options.timeoutMs / 1000} s`, err);
        throw unreachable(`connect: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err);
      }
      const status = res.statusCode ?? 0;
      if ([301, 302, 303, 307, 308].includes(status) && res.headers.location) {
        // Its body is not wanted: the socket is closed now, not drained (a body may never end).
        res.destroy();
        if (hop >= MAX_REDIRECTS) throw fetchFailed(`the input URL redirects more than ${MAX_REDIRECTS} times`);
        let next: URL;
        try {
          next = new URL(res.headers.location, url);
        } catch {
          throw fetchFailed('the input URL redirects to an invalid location');
        }
        if (next.protocol !== 'http:' && next.protocol !== 'https:') throw fetchFailed(`the input URL redirects to a ${next.protocol} URL`);
        url = next;
        continue;
      }
      if (status === 304 && validators) {
        res.destroy();
        return { headers: headersOf(res) };
      }
      if (status < 200 || status > 299) {
        res.destroy();
        throw unreachable(`HTTP status ${status}`);
      }
      try {
        const bytes = await readCapped(res, options.maxBytes);
        readToEnd = true;
        return validators ? { bytes, headers: headersOf(res) } : bytes;
      } catch (err) {
        if (err instanceof HttpError) throw err;
        if (controller.signal.aborted) throw fetchFailed(`fetching the input URL took longer than ${options.timeoutMs / 1000} s`, err);
        throw unreachable(`body: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err);
      }
    }
  } finally {
    clearTimeout(timer);
    // Whatever is still open (a request whose answer was not read, a body cut short) is closed.
    if (!readToEnd) controller.abort();
    release?.();
  }
}
