// What every result store shares: the interface the server talks to, result ids and names, the
// media type of an extension, the ETag, and the sweeper's default interval. The stores import it,
// never each other (index.ts picks one).
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { MEDIA_TYPES, type OutputFormat } from '../../lib/schema.js';

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
  /** A keyed area of this store under its own name, bound and lifetime (a cache every process sharing the store shares). */
  entries?(options: KeyedEntriesOptions): KeyedEntries;
}

/**
 * Bytes by key beside the results, for caches (the matte cache): an entry may vanish at any time
 * (its lifetime, the size bound, another process), and a failing store is a missing entry.
 */
export interface KeyedEntries {
  /** The entry's bytes, or undefined (unknown, expired, unreadable, the store failing). */
  get(key: string): Promise<Buffer | undefined>;
  /** Writes the entry, replacing one of this store's; throws when it cannot (the caller drops it). */
  put(key: string, data: Buffer): Promise<void>;
  /** Stops the sweeps; calls still running end (or are given up) before it resolves. */
  close(): Promise<void>;
}

export interface KeyedEntriesOptions {
  /** The area's name in the store (a directory, a key prefix). */
  name: string;
  ttlSeconds: number;
  /** The bytes the area may hold, all processes together, each entry counted at storedCost(). */
  maxBytes: number;
  /** The entries the area may hold, all processes together. */
  maxEntries: number;
  onError?: (err: unknown) => void;
}

/**
 * What an entry of `size` bytes costs its store at least: whole blocks of `blockSize` (the file
 * system's block, or OBJECT_FLOOR_BYTES for an object), one at least. Quotas count this, not the
 * size: a 44-byte file takes a whole 4 KiB block, so counting bytes let a quota hold 100 times
 * its bound in blocks (and inodes).
 */
export function storedCost(size: number, blockSize: number): number {
  return Math.max(1, Math.ceil(size / blockSize)) * blockSize;
}

/** The per-object floor of the S3 store's quotas: object stores keep small objects in blocks of their own too. */
export const OBJECT_FLOOR_BYTES = 4096;

/** The block size assumed where the file system does not say. */
export const DEFAULT_BLOCK_BYTES = 4096;

/** An entry's key: 64 hexadecimal characters (a sha256). */
export const ENTRY_KEY_PATTERN = /^[0-9a-f]{64}$/;

/** A result id: 144 random bits in base64url (24 characters, never a '.'). */
export const ID_PATTERN = /^[A-Za-z0-9_-]{24}$/;
export const EXT_PATTERN = /^[a-z0-9]{1,8}$/;
/** A result's name in a store: `<id>.<ext>`. */
export const RESULT_NAME_PATTERN = /^([A-Za-z0-9_-]{24})\.([a-z0-9]{1,8})$/;

export function newResultId(): string {
  return randomBytes(18).toString('base64url');
}

export function etagOf(id: string): string {
  return `"${id}"`;
}

export function mediaTypeOfExt(ext: string): string {
  return Object.hasOwn(MEDIA_TYPES, ext) ? MEDIA_TYPES[ext as OutputFormat] : 'application/octet-stream';
}

/** How often a store's sweeper runs unless told: every TTL, at least once a minute. */
export function defaultSweepIntervalMs(ttlMs: number): number {
  return Math.min(ttlMs, 60_000);
}
