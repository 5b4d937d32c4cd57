// The result store: where `output=url` results live for their lifetime (docs/api.md,
// "Stored results"). The server only talks to this interface. Two implementations, both safe to share
// between any number of server processes (no process keeps state another one needs):
//   disk (default)  server/store/disk.ts, one file a result in MATTE_RESULTS_DIR
//   s3              server/store/s3.ts, one object a result in an S3-compatible bucket
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { DiskResultStore } from './disk.js';
import { S3ResultStore } from './s3.js';

export interface StoredResult {
  id: string;
  /** File extension of the download URL (the output format's name, e.g. png, jpeg). */
  ext: string;
  mediaType: string;
  size: number;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  /** A strong validator; results never change, so the id makes one. */
  etag: string;
}

export interface ResultStore {
  /** `disk` or `s3` (a metrics label). */
  readonly kind: string;
  /** Prepares the store (creates and checks it, starts the sweeper); throws StoreSetupError on a setup problem. */
  open(): Promise<void>;
  /**
   * Stores the bytes atomically under a new unguessable id; resolves once they are durable.
   * Throws an HttpError from ./errors.ts (507 insufficient_storage or 503 store_unavailable).
   */
  put(data: Buffer, meta: { ext: string; mediaType: string }): Promise<StoredResult>;
  /** The result, or undefined when unknown, of another extension, or expired (even if not yet deleted). */
  get(id: string, ext: string): Promise<StoredResult | undefined>;
  /** The bytes of a result, whole or the inclusive range [start, end]; undefined when it is gone. */
  read(result: StoredResult, range?: { start: number; end: number }): Promise<Readable | undefined>;
  /** Deletes expired results (and abandoned temporary files); returns how many results. */
  sweep(): Promise<number>;
  /** Whether a result can be written now (for /readyz): real bytes are written. */
  writable(): Promise<boolean>;
  /** The URL a client should download from instead of matte's own (a presigned URL), if any. */
  publicUrl?(result: StoredResult): Promise<string | undefined>;
  /** The unexpired results of every process and their bytes, as the last sweep counted them. */
  usage(): { results: number; bytes: number } | undefined;
  /** Stops the sweeper. */
  close(): Promise<void>;
}

/** The store the configuration asks for (opened later by startServer). */
export function createStore(config: Config, logger: Logger): ResultStore {
  const onError = (err: unknown) => logger.error({ err }, 'result sweep failed');
  if (config.resultsStore === 's3') {
    return new S3ResultStore({ ...config.s3!, presign: config.resultsPresign, ttlSeconds: config.resultTtlSeconds, maxBytes: config.resultsMaxBytes, onError, logger });
  }
  return new DiskResultStore({ dir: config.resultsDir, ttlSeconds: config.resultTtlSeconds, maxBytes: config.resultsMaxBytes, onError });
}

export { DiskResultStore, newResultId } from './disk.js';
export { S3ResultStore } from './s3.js';
