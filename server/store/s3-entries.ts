// The S3 store's keyed area (KeyedEntries in common.ts; the matte cache, server/matte-cache.ts):
// `<prefix><name>/<key>`, one object an entry, written with the store's marker (s3-calls.ts). An
// object there without the marker is another application's: never served, replaced or deleted. The
// results' sweep does not list the area (s3.ts lists its prefix with a delimiter).
//
// Lifetime: an entry's LastModified is when it was last written. A get of an entry older than the
// TTL is a miss, deleted or not. A hit on an entry older than a tenth of the TTL writes the same
// bytes again, in the background: that renews LastModified on every S3-compatible store (a copy onto
// itself does not, on some), so the listing alone orders the entries by last use, and renewals
// cost about ten writes an entry a TTL (a few more when processes renew it at once).
// Bounds: the space (each entry counted at least OBJECT_FLOOR_BYTES, common.ts) and the number of
// entries. Every process sweeps every min(TTL, 5 min). A sweep lists the area, deletes the entries
// past the TTL and, while the rest are over a bound, lists it again and deletes the least recently
// written, down to 80% of both (eviction.ts: nothing of the listing is kept but a histogram);
// before each delete a HEAD checks the marker. A put compares the bounds with the last listing
// plus its own puts since and sweeps first when over one; so with N processes the bounds can be
// passed by what the other N-1 write between two of their sweeps.
// Nothing here fails a request: a lookup has a deadline of its own (a store that stalls costs a
// miss, not the SDK's timeouts and retries), any failure is a miss or a dropped write, and closing
// gives up the calls in flight.
import type * as S3 from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { ENTRY_KEY_PATTERN, OBJECT_FLOOR_BYTES, storedCost, type KeyedEntries, type KeyedEntriesOptions } from './common.js';
import { EvictionPlan, NO_ROOM, type Room } from './eviction.js';
import { headObject, MARKER, MARKER_META, S3CallError, statusOf, type Sdk } from './s3-calls.js';
import { Sweeper } from './sweeper.js';

/** The longest a lookup may add to a request when the store is slow or gone. */
const LOOKUP_DEADLINE_MS = 2000;
/** Sweeps list the whole area: not more often than this (entries live for days). */
const MAX_SWEEP_INTERVAL_MS = 5 * 60_000;

export interface S3EntriesOptions extends Omit<KeyedEntriesOptions, 'name'> {
  bucket: string;
  /** The area's key prefix, ending with '/'. */
  prefix: string;
  /** The store's SDK and client once it is open, undefined before. */
  connection: () => { sdk: Sdk; client: S3.S3Client } | undefined;
  /** The store's deadline of one call: a lookup gets at most LOOKUP_DEADLINE_MS of it. */
  timeoutMs: number;
  sweepIntervalMs?: number;
  now?: () => number;
}

export class S3Entries implements KeyedEntries {
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly sweeper: Sweeper;
  /** Aborts every call in flight when the area is closed. */
  private readonly closing = new AbortController();
  private readonly inFlight = new Set<Promise<unknown>>();
  private started = false;
  /** Space and entries held, as of the last sweep plus this process's puts since; undefined before a sweep. */
  private bytes: number | undefined;
  private entries = 0;
  private sweeping: Promise<void> | undefined;

  constructor(private readonly options: S3EntriesOptions) {
    this.ttlMs = options.ttlSeconds * 1000;
    this.now = options.now ?? Date.now;
    const interval = options.sweepIntervalMs ?? Math.min(this.ttlMs, MAX_SWEEP_INTERVAL_MS);
    this.sweeper = new Sweeper(() => this.sweep(), interval, options.onError ?? (() => {}));
  }

  /** The SDK and client; the sweeper starts with the first use (the store is open by then). */
  private connected(): { sdk: Sdk; client: S3.S3Client } {
    const connection = this.options.connection();
    if (!connection || this.closing.signal.aborted) throw new Error('the S3 store is not open');
    if (!this.started) {
      this.started = true;
      this.sweeper.start();
    }
    return connection;
  }

  /** Every call's options: given up when the area closes (or at `signal`). */
  private abortable(signal: AbortSignal = this.closing.signal): { abortSignal: AbortSignal } {
    return { abortSignal: signal };
  }

  private track<T>(call: Promise<T>): Promise<T> {
    this.inFlight.add(call);
    void call.catch(() => {}).finally(() => this.inFlight.delete(call));
    return call;
  }

  async get(key: string): Promise<Buffer | undefined> {
    if (!ENTRY_KEY_PATTERN.test(key)) return undefined;
    try {
      const signal = AbortSignal.any([this.closing.signal, AbortSignal.timeout(Math.min(this.options.timeoutMs, LOOKUP_DEADLINE_MS))]);
      const lookup = this.track(this.read(key, signal));
      const found = await lookup;
      if (!found) return undefined;
      // Used again: written again (in the background, nobody waits) once a tenth of its lifetime old.
      if (this.now() - found.written > this.ttlMs / 10) this.track(this.write(key, found.data)).catch(() => {});
      return found.data;
    } catch {
      return undefined; // gone, unreadable, too slow, the store failing: a miss
    }
  }

  /** The entry's bytes and when it was written, or undefined when absent, foreign, expired or too large. */
  private async read(key: string, signal: AbortSignal): Promise<{ data: Buffer; written: number } | undefined> {
    const { sdk, client } = this.connected();
    let out: S3.GetObjectCommandOutput;
    try {
      out = await client.send(new sdk.GetObjectCommand({ Bucket: this.options.bucket, Key: this.options.prefix + key }), this.abortable(signal));
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
    const body = out.Body as (Readable & { transformToByteArray(): Promise<Uint8Array> }) | undefined;
    const written = out.LastModified?.getTime() ?? this.now();
    const usable = out.Metadata?.[MARKER_META] === MARKER && (out.ContentLength ?? Infinity) <= this.options.maxBytes && written + this.ttlMs > this.now();
    if (!body || !usable) {
      body?.destroy();
      return undefined;
    }
    const bytes = await body.transformToByteArray();
    return { data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), written };
  }

  async put(key: string, data: Buffer): Promise<void> {
    if (!ENTRY_KEY_PATTERN.test(key)) throw new Error('bad cache key');
    const cost = storedCost(data.length, OBJECT_FLOOR_BYTES);
    if (cost > this.options.maxBytes) throw new Error('entry larger than the cache');
    const put = this.track(
      (async () => {
        const over = () => this.bytes === undefined || this.bytes + cost > this.options.maxBytes || this.entries + 1 > this.options.maxEntries;
        // Room for this entry: a sweep already running may not have made it, so at most one more.
        for (let i = 0; i < 2 && over(); i++) await this.sweep({ bytes: cost, entries: 1 });
        const head = await this.head(key);
        if (head && head.Metadata?.[MARKER_META] !== MARKER) throw new Error('another application holds this key');
        await this.write(key, data);
        this.bytes = (this.bytes ?? 0) + cost;
        if (!head) this.entries += 1;
      })(),
    );
    await put;
  }

  private async write(key: string, data: Buffer): Promise<void> {
    const { sdk, client } = this.connected();
    await client.send(
      new sdk.PutObjectCommand({
        Bucket: this.options.bucket,
        Key: this.options.prefix + key,
        Body: data,
        ContentLength: data.length,
        ContentType: 'application/octet-stream',
        Metadata: { [MARKER_META]: MARKER },
      }),
      this.abortable(),
    );
  }

  /** The object's metadata, or undefined when there is none. */
  private head(key: string): Promise<S3.HeadObjectCommandOutput | undefined> {
    const { sdk, client } = this.connected();
    return headObject(sdk, client, this.options.bucket, this.options.prefix + key, this.abortable());
  }

  /** Deletes the entry if it carries the marker; whether it did. */
  private async deleteMarked(key: string): Promise<boolean> {
    const head = await this.head(key);
    if (head?.Metadata?.[MARKER_META] !== MARKER) return false;
    const { sdk, client } = this.connected();
    await client.send(new sdk.DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.options.prefix + key }), this.abortable());
    return true;
  }

  /** Deletes the entries past their lifetime, then the least recently written while over a bound (with `room` left). */
  sweep(room: Room = NO_ROOM): Promise<void> {
    this.sweeping ??= this.track(this.sweepOnce(room))
      .catch((err) => {
        if (this.closing.signal.aborted) return; // given up by close(): not a failure
        throw new S3CallError(err); // what smithy attaches to errors stays out of the log
      })
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** Each entry of the area with when it was written and its cost, a page of the listing at a time. */
  private async *listed(): AsyncGenerator<{ key: string; written: number; cost: number }> {
    const { sdk, client } = this.connected();
    const { bucket, prefix } = this.options;
    let token: string | undefined;
    do {
      const page = await client.send(new sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }), this.abortable());
      for (const object of page.Contents ?? []) {
        const key = (object.Key ?? '').slice(prefix.length);
        if (!ENTRY_KEY_PATTERN.test(key)) continue; // not an entry's name: left alone
        yield { key, written: object.LastModified?.getTime() ?? this.now(), cost: storedCost(object.Size ?? 0, OBJECT_FLOOR_BYTES) };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  private async sweepOnce(room: Room): Promise<void> {
    const now = this.now();
    const plan = new EvictionPlan(now, this.ttlMs);
    for await (const { key, written, cost } of this.listed()) {
      if (written + this.ttlMs <= now) await this.deleteMarked(key);
      else plan.add(written + this.ttlMs, cost);
    }
    // Another application's object under an entry's name counts until the eviction finds it.
    let { total: bytes, entries } = plan;
    if (plan.plan(this.options.maxBytes, this.options.maxEntries, room)) {
      for await (const { key, written, cost } of this.listed()) {
        if (written + this.ttlMs <= now || !plan.evicts(written + this.ttlMs, cost)) continue;
        if (await this.deleteMarked(key)) {
          bytes -= cost;
          entries -= 1;
        }
      }
    }
    this.bytes = bytes;
    this.entries = entries;
  }

  async close(): Promise<void> {
    this.sweeper.stop();
    this.closing.abort();
    await Promise.allSettled([...this.inFlight]);
  }
}
