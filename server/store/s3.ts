// MATTE_RESULTS_STORE=s3: one object a result in an S3-compatible bucket (AWS S3, MinIO, Ceph RGW,
// Cloudflare R2, Garage), through the AWS SDK v3. Any number of processes on any number of machines
// may share the bucket and prefix: the bucket is the truth.
//
//   <prefix><id>.<ext>             a result; Content-Type, its expiry in the x-amz-meta-expires-at
//                                  metadata (milliseconds since the epoch) and matte's own marker,
//                                  x-amz-meta-matte-store
//   <prefix>.matte-probe-<random>  the /readyz probe of one process (written, then deleted)
//   <prefix><name>/<key>           an entry of a keyed area (entries(): the matte cache), s3-entries.ts
//
// The prefix (default matte-results/) may be shared with other applications: the sweeper deletes
// only objects that carry the marker, checked with a HeadObject, whatever their names.
//
// A PutObject is atomic (the object is whole or absent), so no temporary name is needed. get is
// one HeadObject: an object past its expiry is 404 even before it is deleted. The sweeper (every
// process runs one, every min(TTL, 60 s)) lists the prefix; an object older than this process's
// TTL is checked with HeadObject and deleted if it is marked and expired (or older than the
// longest possible lifetime, MATTE_RESULT_TTL_SECONDS' maximum plus clock skew). A bucket
// lifecycle rule on the prefix (expire after 2 days) can do the deleting instead or as well
// (docs/deploy.md); the expiry check on download does not depend on either. The quota (quota.ts)
// counts each result at least OBJECT_FLOOR_BYTES (common.ts), and the number of results.
//
// The SDK is large and the disk store is the default, so the SDK is an optional peer dependency:
// imported (s3-calls.ts) only when this store is opened, or the command works on a bucket, with an
// error naming the npm command when it is missing.
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type * as S3 from '@aws-sdk/client-s3';
import { MAX_RESULT_TTL_SECONDS } from '../config.js';
import { HttpError } from '../errors.js';
import { storeError, storeUnavailable, StoreSetupError } from './errors.js';
import { defaultSweepIntervalMs, etagOf, EXT_PATTERN, ID_PATTERN, mediaTypeOfExt, newResultId, OBJECT_FLOOR_BYTES, RESULT_NAME_PATTERN, storedCost, type KeyedEntries, type KeyedEntriesOptions, type ResultStore, type StoredResult } from './common.js';
import { ResultsQuota } from './quota.js';
import { DEFAULT_TIMEOUT_MS, describe, headObject, importOptional, MARKER, MARKER_META, openClient, S3CallError, statusOf, type Sdk } from './s3-calls.js';
import { S3Entries } from './s3-entries.js';
import { Sweeper } from './sweeper.js';
import type { S3Settings } from '../config-scale.js';

export { SDK_INSTALL_COMMAND } from './s3-calls.js';

const PROBE_PREFIX = '.matte-probe-';
const PROBE_CACHE_MS = 2000;
const CLOCK_SKEW_MS = 5 * 60_000;
const EXPIRES_META = 'expires-at';

export interface S3StoreOptions extends Omit<S3Settings, 'timeoutMs'> {
  /** Answer `url` with a presigned GET URL valid until the result expires. */
  presign: boolean;
  /** The deadline of one S3 call (each attempt); connecting gets at most 3 s of it. */
  timeoutMs?: number;
  ttlSeconds: number;
  maxBytes?: number;
  maxEntries?: number;
  sweepIntervalMs?: number;
  now?: () => number;
  onError?: (err: unknown) => void;
  logger?: Logger;
}

type Presign = typeof import('@aws-sdk/s3-request-presigner').getSignedUrl;

export class S3ResultStore implements ResultStore {
  readonly kind = 's3';
  private sdk!: Sdk;
  private client!: S3.S3Client;
  private presigner: Presign | undefined;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly quota: ResultsQuota;
  private readonly probeKey: string;
  private probe: { at: number; ok: Promise<boolean> } | undefined;
  private readonly sweeper: Sweeper;

  constructor(private readonly options: S3StoreOptions) {
    this.ttlMs = options.ttlSeconds * 1000;
    this.now = options.now ?? Date.now;
    this.quota = new ResultsQuota(options.maxBytes ?? 0, options.maxEntries ?? 0, () => this.sweep(), this.now);
    this.sweeper = new Sweeper(() => this.sweep(), options.sweepIntervalMs ?? defaultSweepIntervalMs(this.ttlMs), options.onError ?? (() => {}));
    this.probeKey = `${options.prefix}${PROBE_PREFIX}${randomBytes(9).toString('base64url')}`;
  }

  async open(): Promise<void> {
    this.sdk = await importOptional<Sdk>('@aws-sdk/client-s3', 'MATTE_RESULTS_STORE=s3');
    if (this.options.presign) {
      this.presigner = (await importOptional<{ getSignedUrl: Presign }>('@aws-sdk/s3-request-presigner', 'MATTE_RESULTS_PRESIGN=1')).getSignedUrl;
    }
    this.client = await openClient(this.sdk, this.options, 'MATTE_RESULTS_STORE=s3');
    try {
      await this.client.send(new this.sdk.HeadBucketCommand({ Bucket: this.options.bucket }));
    } catch (err) {
      if (statusOf(err) === 404) throw new StoreSetupError(`MATTE_S3_BUCKET=${this.options.bucket}: no such bucket`);
      // Unreachable or refused: the server starts, /readyz stays 503 until the store answers.
      this.options.logger?.warn({ err: describe(err) }, 'the S3 result store does not answer yet');
    }
    this.sweeper.start();
  }

  private key(id: string, ext: string): string {
    return `${this.options.prefix}${id}.${ext}`;
  }

  async put(data: Buffer, meta: { ext: string; mediaType: string }): Promise<StoredResult> {
    if (!EXT_PATTERN.test(meta.ext)) throw new Error(`bad extension ${meta.ext}`);
    const id = newResultId();
    const expiresAt = this.now() + this.ttlMs;
    const cost = storedCost(data.length, OBJECT_FLOOR_BYTES);
    try {
      await this.quota.admit(cost);
      await this.client.send(
        new this.sdk.PutObjectCommand({
          Bucket: this.options.bucket,
          Key: this.key(id, meta.ext),
          Body: data,
          ContentLength: data.length,
          ContentType: meta.mediaType,
          Metadata: { [EXPIRES_META]: String(expiresAt), [MARKER_META]: MARKER },
        }),
      );
    } catch (err) {
      throw storeError(err instanceof HttpError ? err : new S3CallError(err));
    }
    this.quota.added(cost);
    return { id, ext: meta.ext, mediaType: meta.mediaType, size: data.length, expiresAt, etag: etagOf(id) };
  }

  async get(id: string, ext: string): Promise<StoredResult | undefined> {
    if (!ID_PATTERN.test(id) || !EXT_PATTERN.test(ext)) return undefined;
    let head: S3.HeadObjectCommandOutput | undefined;
    try {
      head = await this.head(this.key(id, ext));
    } catch (err) {
      throw storeUnavailable(new S3CallError(err));
    }
    if (!head) return undefined;
    const expiresAt = Number(head.Metadata?.[EXPIRES_META]);
    if (!Number.isFinite(expiresAt) || expiresAt <= this.now()) return undefined; // expired: 404 even before deletion
    return { id, ext, mediaType: head.ContentType ?? mediaTypeOfExt(ext), size: head.ContentLength ?? 0, expiresAt, etag: etagOf(id) };
  }

  async read(result: StoredResult, range?: { start: number; end: number }): Promise<Readable | undefined> {
    try {
      const out = await this.client.send(
        new this.sdk.GetObjectCommand({
          Bucket: this.options.bucket,
          Key: this.key(result.id, result.ext),
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
      );
      return out.Body as Readable;
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw storeUnavailable(new S3CallError(err));
    }
  }

  async publicUrl(result: StoredResult): Promise<string | undefined> {
    if (!this.presigner) return undefined;
    const expiresIn = Math.max(1, Math.floor((result.expiresAt - this.now()) / 1000));
    try {
      return await this.presigner(this.client, new this.sdk.GetObjectCommand({ Bucket: this.options.bucket, Key: this.key(result.id, result.ext) }), { expiresIn });
    } catch (err) {
      throw storeUnavailable(new S3CallError(err));
    }
  }

  /** The object's metadata, or undefined when it is gone. */
  private head(key: string): Promise<S3.HeadObjectCommandOutput | undefined> {
    return headObject(this.sdk, this.client, this.options.bucket, key);
  }

  async sweep(): Promise<number> {
    try {
      return await this.sweepPrefix();
    } catch (err) {
      throw new S3CallError(err); // logged by the sweeper: what smithy attaches to errors stays out
    }
  }

  private async sweepPrefix(): Promise<number> {
    const now = this.now();
    const { bucket, prefix } = this.options;
    let removed = 0;
    let bytes = 0;
    let results = 0;
    let token: string | undefined;
    do {
      // With a delimiter: keyed areas (<prefix><name>/..., entries()) are not walked; results have no '/'.
      const page = await this.client.send(new this.sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: '/', ContinuationToken: token }));
      for (const object of page.Contents ?? []) {
        const name = (object.Key ?? '').slice(prefix.length);
        const modified = object.LastModified?.getTime() ?? now;
        const age = now - modified;
        if (name.startsWith(PROBE_PREFIX)) {
          // A probe of a process that died.
          if (age > 3_600_000 && (await this.head(object.Key!))?.Metadata?.[MARKER_META] === MARKER) await this.delete(object.Key!);
          continue;
        }
        if (!RESULT_NAME_PATTERN.test(name)) continue; // not a result's name: left alone
        let expired = false;
        if (age >= this.ttlMs - CLOCK_SKEW_MS) {
          const head = await this.head(object.Key!);
          if (!head) continue; // deleted meanwhile
          if (head.Metadata?.[MARKER_META] !== MARKER) continue; // not written by matte: left alone
          const expiresAt = Number(head.Metadata?.[EXPIRES_META]);
          expired = age > MAX_RESULT_TTL_SECONDS * 1000 + CLOCK_SKEW_MS || !Number.isFinite(expiresAt) || expiresAt <= now;
        }
        if (expired) {
          await this.delete(object.Key!);
          removed++;
        } else {
          bytes += storedCost(object.Size ?? 0, OBJECT_FLOOR_BYTES);
          results++;
        }
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    this.quota.scanned(results, bytes);
    return removed;
  }

  private async delete(key: string): Promise<void> {
    await this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.options.bucket, Key: key }));
  }

  /**
   * Puts and deletes a small object with real bytes; the answer is reused for 2 s. The probe as a
   * whole ends at one timeout, whatever the client's retries: a stalled store makes /readyz 503
   * within MATTE_S3_TIMEOUT_SECONDS, not within twice that.
   */
  writable(): Promise<boolean> {
    const now = this.now();
    if (this.probe && now - this.probe.at < PROBE_CACHE_MS) return this.probe.ok;
    const ok = (async () => {
      const deadline = { abortSignal: AbortSignal.timeout(this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS) };
      try {
        await this.client.send(new this.sdk.PutObjectCommand({ Bucket: this.options.bucket, Key: this.probeKey, Body: randomBytes(1024), Metadata: { [MARKER_META]: MARKER } }), deadline);
        await this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.probeKey }), deadline);
        return true;
      } catch (err) {
        this.options.logger?.warn({ err: describe(err) }, 'the S3 result store cannot be written');
        return false;
      }
    })();
    this.probe = { at: now, ok };
    return ok;
  }

  /** `<prefix><name>/<key>` (s3-entries.ts), through this store's client. */
  entries(options: KeyedEntriesOptions): KeyedEntries {
    const { name, ...rest } = options;
    return new S3Entries({
      ...rest,
      bucket: this.options.bucket,
      prefix: `${this.options.prefix}${name}/`,
      connection: () => (this.client ? { sdk: this.sdk, client: this.client } : undefined),
      timeoutMs: this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      now: this.now,
    });
  }

  usage(): { results: number; bytes: number } | undefined {
    return this.quota.lastScan;
  }

  async close(): Promise<void> {
    this.sweeper.stop();
    this.client?.destroy();
  }
}
