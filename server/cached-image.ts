// What a GET image URL (a foreign dialect's, matte's own signed one) does before and around its
// job, so that a repeat costs neither the source's body nor a decode (docs/api.md, "The result
// cache"):
//   1. the source's identity: its ETag, else its Last-Modified, else the sha256 of its bytes. Known
//      without a request while the source's own Cache-Control says it is fresh (the identity
//      remembered in the result cache), else by a conditional request (304: no body), else from
//      the fetched answer;
//   2. the answer's ETag from that identity and everything else that decides the bytes (the
//      variant: operations, format, quality, ...): a 304 needs nothing more;
//   3. the answer from the result cache under the same key; on a miss the source's body (fetched
//      now if step 1 did not), the job, and the answer kept for the next time.
import { createHash } from 'node:crypto';
import { MATTE_VERSION, type Result } from '../lib/index.js';
import { fetchSource, type SourceAnswer, type SourceHeaders, type Validators } from './input/fetch.js';
import { cacheKey, type CachedImage, type SourceMemo } from './result-cache.js';
import type { Services } from './services.js';

/** A source as far as it is known: its identity, its image type, and its body when it had to be fetched. */
export interface KnownSource {
  url: URL;
  identity: string;
  /** The image type its first bytes say (png, jpeg, gif, webp, avif, heic, tiff), if any. */
  type?: string;
  bytes?: Buffer;
}

/** The image type of a source by its magic bytes (what the addon's sniff accepts; the addon checks again). */
export function sniffType(bytes: Buffer): string | undefined {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  const ascii = (from: number, to: number) => bytes.subarray(from, to).toString('latin1');
  if (ascii(0, 4) === 'GIF8') return 'gif';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp';
  if (ascii(0, 4) === 'II*\0' || ascii(0, 4) === 'MM\0*') return 'tiff';
  if (ascii(4, 8) === 'ftyp') {
    const brand = ascii(8, 12);
    if (brand === 'avif' || brand === 'avis') return 'avif';
    return 'heic';
  }
  return undefined;
}

export interface ImageRequest {
  source: URL;
  /** Everything but the source that decides the answer's bytes, as one canonical text. */
  variant: string;
  /** Runs the job on the source's bytes. */
  render(input: Buffer): Promise<Result>;
}

/** The seconds the source's Cache-Control lets a shared cache trust it without asking (s-maxage, else max-age; no-cache, no-store: 0). */
export function freshSeconds(cacheControl: string | undefined): number {
  if (!cacheControl) return 0;
  const directives = new Map<string, string>();
  for (const part of cacheControl.toLowerCase().split(',')) {
    const [name, value = ''] = part.trim().split('=', 2);
    if (name) directives.set(name, value.replace(/^"|"$/g, ''));
  }
  if (directives.has('no-cache') || directives.has('no-store') || directives.has('private')) return 0;
  const seconds = Number(directives.get('s-maxage') ?? directives.get('max-age'));
  return Number.isSafeInteger(seconds) && seconds > 0 ? seconds : 0;
}

/** The identity a source's answer gives it, and the validators to ask about it again. */
function identityOf(headers: SourceHeaders, bytes: Buffer): { identity: string; validators?: Validators } {
  if (headers.etag) return { identity: `etag ${headers.etag}`, validators: { etag: headers.etag } };
  if (headers.lastModified) return { identity: `modified ${headers.lastModified}`, validators: { lastModified: headers.lastModified } };
  return { identity: `sha256 ${createHash('sha256').update(bytes).digest('hex')}` };
}

/** Fetches the source (conditionally with `validators`), counted as every input URL is. */
async function fetchCounted(services: Services, url: URL, validators: Validators): Promise<SourceAnswer> {
  try {
    const answer = await fetchSource(url, services.fetch, validators);
    services.metrics.urlFetched(answer.bytes ? 'ok' : 'not_modified');
    return answer;
  } catch (err) {
    services.metrics.urlFetched((err as { code?: string }).code ?? 'error');
    throw err;
  }
}

/**
 * Remembers a fetched source's identity (only one that can be revalidated: the bytes' hash needs
 * the bytes). `revalidated`: the source answered 304, so the store already holds this identity and
 * is written again only when the source gave it a lifetime to extend.
 */
function remember(services: Services, url: URL, headers: SourceHeaders, identity: string, type: string | undefined, validators: Validators | undefined, revalidated = false): void {
  if (!services.resultCache || !validators) return;
  const seconds = Math.min(freshSeconds(headers.cacheControl), services.config.resultCacheTtlSeconds);
  const memo: SourceMemo = { identity, type, ...validators, freshUntil: Date.now() + seconds * 1000 };
  services.resultCache.putSource(url.href, memo, { store: !revalidated || seconds > 0 });
}

/** Fetches the source's body and learns its identity. */
async function fetchWhole(services: Services, url: URL): Promise<KnownSource> {
  const answer = await fetchCounted(services, url, {});
  const bytes = answer.bytes!;
  const { identity, validators } = identityOf(answer.headers, bytes);
  const type = sniffType(bytes);
  remember(services, url, answer.headers, identity, type, validators);
  return { url, identity, type, bytes };
}

/** The source's identity, with as little of the source as it takes (step 1 above). */
export async function knownSource(services: Services, url: URL): Promise<KnownSource> {
  const memo = await services.resultCache?.getSource(url.href);
  if (!memo) return fetchWhole(services, url);
  if (memo.freshUntil > Date.now()) return { url, identity: memo.identity, type: memo.type };
  const validators = { etag: memo.etag, lastModified: memo.lastModified };
  const answer = await fetchCounted(services, url, validators);
  if (!answer.bytes) {
    remember(services, url, answer.headers, memo.identity, memo.type, validators, true);
    return { url, identity: memo.identity, type: memo.type };
  }
  const known = identityOf(answer.headers, answer.bytes);
  const type = sniffType(answer.bytes);
  remember(services, url, answer.headers, known.identity, type, known.validators);
  return { url, identity: known.identity, type, bytes: answer.bytes };
}

/** The result cache's key of an answer. */
function answerKey(variant: string, source: KnownSource): string {
  return cacheKey(JSON.stringify([MATTE_VERSION, variant, source.url.href, source.identity]));
}

/** A strong ETag of the answer, known before any pixel: the same variant of the same source gives the same bytes. */
export function answerEtag(variant: string, source: KnownSource): string {
  return `"${Buffer.from(answerKey(variant, source), 'hex').toString('base64url').slice(0, 32)}"`;
}

/**
 * The answer (step 3 above): from the result cache, else rendered (fetching the body if need be) and
 * kept. `source` may change when the body had to be fetched again and the source had changed
 * meanwhile: the returned one is what the answer was made of.
 */
export async function cachedImage(services: Services, request: ImageRequest, known: KnownSource): Promise<{ image: CachedImage; source: KnownSource; cached: boolean }> {
  const cache = services.resultCache;
  const hit = await cache?.getResult(answerKey(request.variant, known));
  if (hit) return { image: hit, source: known, cached: true };
  const source = known.bytes ? known : await fetchWhole(services, request.source);
  const result = await request.render(source.bytes!);
  const image: CachedImage = { data: result.data, format: result.format, width: result.width, height: result.height };
  cache?.putResult(answerKey(request.variant, source), image);
  return { image, source, cached: false };
}
