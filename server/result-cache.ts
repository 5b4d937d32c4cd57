// The result cache (docs/api.md, "The result cache"): encoded answers of GET image URLs (the
// foreign dialects and matte's own signed URLs) kept in a keyed area of the result store, so every
// process sharing the store answers a repeat from it, without decoding anything. Beside each
// result, a source's last known identity (its validators, and until when it may be trusted
// without asking: source-identity.ts) under the source URL's own key, so a repeat knows which
// result it wants before it fetches the source's body, or without fetching it at all.
// Entries name their key and are checked on reading: a corrupt or foreign entry is a miss (`bad`).
// A store that fails or is slow costs a miss or a dropped write, never the request
// (disk-entries.ts, s3-entries.ts); writes happen after the answer (cache-writes.ts).
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { MEDIA_TYPES, type OutputFormat } from '../lib/index.js';
import { CacheWrites, openCacheArea } from './cache-writes.js';
import type { Config } from './config.js';
import type { Metrics } from './metrics.js';
import type { KeyedEntries } from './store/common.js';
import type { ResultStore } from './store/index.js';

/** An encoded answer as the cache keeps it. */
export interface CachedImage {
  data: Buffer;
  format: OutputFormat;
  width: number;
  height: number;
}

/** What is known of a source without its body: how to revalidate it, and until when not to. */
export interface SourceMemo {
  /** The source's identity (source-identity.ts): a strong ETag or a Last-Modified, as it sent them. */
  identity: string;
  /** The image type its first bytes said (cached-image.ts, sniffType). */
  type?: string;
  etag?: string;
  lastModified?: string;
  /** Milliseconds since the epoch until which the identity holds without asking the source. */
  freshUntil: number;
}

export type ResultCacheOutcome = 'hit' | 'miss' | 'bad' | 'stored' | 'dropped';

const RESULT_MAGIC = Buffer.from('matte-result-1\n');
const SOURCE_MAGIC = Buffer.from('matte-source-1\n');
const KEY_BYTES = 32;

/** The entry key of `text`: the sha256 of it, hex (the keyed areas' key form). */
export function cacheKey(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** An entry: magic, the key's bytes, the length of a JSON header, the header, then the payload. */
function encode(magic: Buffer, key: string, header: object, payload: Buffer = Buffer.alloc(0)): Buffer {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(json.length);
  return Buffer.concat([magic, Buffer.from(key, 'hex'), length, json, payload]);
}

/** The header and payload of an entry of `key`, or undefined when it is not one (truncated, foreign, another key's). */
function decode(magic: Buffer, key: string, entry: Buffer): { header: Record<string, unknown>; payload: Buffer } | undefined {
  const start = magic.length + KEY_BYTES + 4;
  if (entry.length < start || !entry.subarray(0, magic.length).equals(magic)) return undefined;
  if (!entry.subarray(magic.length, magic.length + KEY_BYTES).equals(Buffer.from(key, 'hex'))) return undefined;
  const length = entry.readUInt32BE(magic.length + KEY_BYTES);
  if (start + length > entry.length) return undefined;
  try {
    const header = JSON.parse(entry.subarray(start, start + length).toString('utf8')) as unknown;
    if (header === null || typeof header !== 'object') return undefined;
    return { header: header as Record<string, unknown>, payload: entry.subarray(start + length) };
  } catch {
    return undefined;
  }
}

const positive = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v > 0;

/** Sources whose identity a process keeps in memory beside the store's copy (a few hundred bytes each). */
const MEMORY_SOURCES = 10_000;

export class ResultCache {
  private readonly writes = new CacheWrites('result cache');
  private readonly sources = new Map<string, SourceMemo>();

  constructor(
    private readonly entries: KeyedEntries,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
  ) {}

  /** The cached answer of `key`, or undefined (counted hit, miss or bad). */
  async getResult(key: string): Promise<CachedImage | undefined> {
    const entry = await this.entries.get(key);
    if (!entry) {
      this.metrics.resultCacheEvent('miss');
      return undefined;
    }
    const found = decode(RESULT_MAGIC, key, entry);
    const { format, width, height, size } = found?.header ?? {};
    if (!found || typeof format !== 'string' || !Object.hasOwn(MEDIA_TYPES, format) || !positive(width) || !positive(height) || size !== found.payload.length) {
      this.metrics.resultCacheEvent('bad');
      return undefined;
    }
    this.metrics.resultCacheEvent('hit');
    return { data: found.payload, format: format as OutputFormat, width, height };
  }

  /** Keeps an answer (after it was sent: nothing waits; a write that fails is dropped and counted). */
  putResult(key: string, image: CachedImage): void {
    const entry = encode(RESULT_MAGIC, key, { format: image.format, width: image.width, height: image.height, size: image.data.length }, image.data);
    this.writes.add(() => this.entries.put(key, entry)).then(
      () => this.metrics.resultCacheEvent('stored'),
      (err) => {
        this.metrics.resultCacheEvent('dropped');
        this.logger.debug({ err }, 'result cache entry not written');
      },
    );
  }

  /** What is known of the source at `url`, or undefined: this process's own memory first, then the store. */
  async getSource(url: string): Promise<SourceMemo | undefined> {
    const known = this.sources.get(url);
    if (known) return known;
    const key = cacheKey(`source\n${url}`);
    const entry = await this.entries.get(key);
    const header = entry && decode(SOURCE_MAGIC, key, entry)?.header;
    if (!header || typeof header.identity !== 'string' || typeof header.freshUntil !== 'number') return undefined;
    const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
    const memo = { identity: header.identity, type: text(header.type), etag: text(header.etag), lastModified: text(header.lastModified), freshUntil: header.freshUntil };
    this.keep(url, memo);
    return memo;
  }

  /** Remembers what is known of the source at `url`: in memory, and (unless `store` is false) in the store, in the background. */
  putSource(url: string, memo: SourceMemo, options: { store: boolean } = { store: true }): void {
    this.keep(url, memo);
    if (!options.store) return;
    const key = cacheKey(`source\n${url}`);
    this.writes.add(() => this.entries.put(key, encode(SOURCE_MAGIC, key, memo))).catch((err) => this.logger.debug({ err }, 'source identity not written'));
  }

  /**
   * This process's memory of sources, at most MEMORY_SOURCES, the oldest forgotten first. It is
   * only ever used as the store's copy would be: trusted until its freshUntil, then revalidated.
   */
  private keep(url: string, memo: SourceMemo): void {
    this.sources.delete(url);
    this.sources.set(url, memo);
    if (this.sources.size > MEMORY_SOURCES) this.sources.delete(this.sources.keys().next().value!);
  }

  async close(): Promise<void> {
    await this.writes.close();
    await this.entries.close();
  }
}

/** The result cache of this configuration, or undefined when it is off or the store has no keyed area. */
export function createResultCache(config: Config, store: ResultStore, metrics: Metrics, logger: Logger): ResultCache | undefined {
  const entries = openCacheArea(store, { name: 'result-cache', ttlSeconds: config.resultCacheTtlSeconds, maxBytes: config.resultCacheMaxBytes, maxEntries: config.resultCacheMaxEntries }, logger);
  return entries && new ResultCache(entries, metrics, logger);
}
