// The HTTPS source: a publisher's URL (or MATTE_MODELS_MIRROR's), through the standard proxy
// variables (HTTPS_PROXY, HTTP_PROXY, NO_PROXY: undici's EnvHttpProxyAgent), following redirects
// (GitHub release assets redirect to their storage). The body goes to `<target>.part`, which an
// interrupted transfer leaves behind: the next attempt, in this run or a later one, asks only for
// the rest (Range). A transfer that passes the most bytes the file may have (its published size,
// else a cap) stops before the byte that passes it is written, and its `.part` is deleted. The
// caller verifies the finished file before it is renamed into place.
import { createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { EnvHttpProxyAgent, interceptors, request, type Dispatcher } from 'undici';
import type { DownloadProgress } from './progress.js';

/** Attempts of one download (the first and the resumptions after an interruption). */
const ATTEMPTS = 5;
const MAX_REDIRECTIONS = 10;

/** A download that failed for a reason worth naming (the URL, the status). */
export class DownloadError extends Error {}

/** A transfer past the most bytes the file may have: stopped, and nothing of it kept. */
export class OversizedDownload extends DownloadError {}

/** undici's reading of the proxy variables, from `env` (the lower-case name first, as curl; an empty value is unset). */
function dispatcher(env: NodeJS.ProcessEnv): Dispatcher {
  const proxies = {
    httpProxy: env.http_proxy || env.HTTP_PROXY || '',
    httpsProxy: env.https_proxy || env.HTTPS_PROXY || '',
    noProxy: env.no_proxy || env.NO_PROXY || '',
  };
  return new EnvHttpProxyAgent(proxies).compose(interceptors.redirect({ maxRedirections: MAX_REDIRECTIONS }));
}

/** Bytes already in the partial file (0 when there is none). */
async function partSize(part: string): Promise<number> {
  return stat(part).then((s) => s.size, () => 0);
}

/**
 * Downloads `url` into `part`, resuming what a previous attempt left there. Returns the bytes of
 * the finished file. `size` is the published size; `limit` the most bytes the file may have
 * (default: `size`, else none). Throws DownloadError when the server refuses, sends more than
 * the limit (the partial file is deleted) or cannot be reached after every attempt (the partial
 * file stays for the next run).
 */
export async function download(url: string, part: string, progress: DownloadProgress, options: { size?: number | null; limit?: number; env?: NodeJS.ProcessEnv } = {}): Promise<number> {
  const agent = dispatcher(options.env ?? process.env);
  const expectedSize = options.size;
  const limit = options.limit ?? expectedSize ?? Number.POSITIVE_INFINITY;
  let lastError: unknown;
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      let have = await partSize(part);
      if (expectedSize && have === expectedSize) return have;
      if (have > limit) {
        await rm(part, { force: true }); // left by a transfer that was not held to the limit
        have = 0;
      }
      try {
        return await attemptDownload(agent, url, part, have, limit, progress);
      } catch (err) {
        if (err instanceof DownloadError) throw err;
        lastError = err;
      }
    }
  } finally {
    progress.finish();
    await agent.close().catch(() => {});
  }
  throw new DownloadError(`${url}: ${reason(lastError)}`);
}

async function attemptDownload(agent: Dispatcher, url: string, part: string, have: number, limit: number, progress: DownloadProgress): Promise<number> {
  const headers: Record<string, string> = { 'user-agent': 'matte-models' };
  if (have > 0) headers.range = `bytes=${have}-`;
  const response = await request(url, { dispatcher: agent, headers });
  const { statusCode } = response;
  if (statusCode === 416 && have > 0) {
    // The partial file already holds everything the server has: the caller's checks decide.
    await response.body.dump();
    return have;
  }
  if (statusCode !== 200 && statusCode !== 206) {
    await response.body.dump();
    throw new DownloadError(`${url} answered HTTP ${statusCode}`);
  }
  // A 200 to a Range request is the whole file again: start over.
  const resumed = statusCode === 206 && have > 0;
  const start = resumed ? have : 0;
  if (!resumed && have > 0) await rm(part, { force: true });
  const length = Number(response.headers['content-length']);
  const total = Number.isFinite(length) ? start + length : undefined;
  const tooLarge = () => new OversizedDownload(`${url} sends more than the ${limit} bytes the file may have`);
  if (total !== undefined && total > limit) {
    response.body.destroy();
    await rm(part, { force: true });
    throw tooLarge();
  }
  let received = start;
  const count = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      // Checked before the chunk is passed on: the file never holds a byte past the limit.
      if (received + chunk.length > limit) {
        done(tooLarge());
        return;
      }
      received += chunk.length;
      progress.update(received, total);
      done(null, chunk);
    },
  });
  try {
    await pipeline(response.body, count, createWriteStream(part, { flags: resumed ? 'a' : 'w' }));
  } catch (err) {
    if (err instanceof OversizedDownload) await rm(part, { force: true }); // else interrupted: kept for the next attempt
    throw err;
  }
  if (total !== undefined && received !== total) throw new Error(`the transfer ended after ${received} of ${total} bytes`);
  return received;
}

/** One line for a network error: its code and message, never a stack. */
export function reason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const code = (err as { code?: string }).code ?? (cause as { code?: string } | undefined)?.code;
  const message = cause instanceof Error ? cause.message : err.message;
  return code && !message.includes(code) ? `${code} ${message}` : message;
}
