// The result store: where `output=url` results live for their lifetime (decisions.md section 8).
// The server only talks to this interface; server/store/disk.ts is the default implementation.
import type { Readable } from 'node:stream';

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
  /** Prepares the store: creates it, removes leftover temporary files and expired results. */
  open(): Promise<void>;
  /** Stores the bytes atomically under a new unguessable id; resolves once they are durable. */
  put(data: Buffer, meta: { ext: string; mediaType: string }): Promise<StoredResult>;
  /** The result, or undefined when unknown or expired. */
  get(id: string): Promise<StoredResult | undefined>;
  /** The bytes of a result, whole or the inclusive range [start, end]; undefined when it is gone. */
  read(result: StoredResult, range?: { start: number; end: number }): Promise<Readable | undefined>;
  /** Deletes expired results; returns how many. */
  sweep(): Promise<number>;
  /** Whether a result can be written now (for /readyz). */
  writable(): Promise<boolean>;
  /** Stops the sweeper. */
  close(): Promise<void>;
}

export { DiskResultStore } from './disk.js';
