// A keyed area beside the results of the disk store, for caches that every process sharing the
// directory shares (the matte cache, server/matte-cache.ts): `<results dir>/matte-cache/<key>`,
// one file an entry, its modification time its expiry, as the results' (store/disk.ts). Unlike
// results, entries may vanish at any time: no fsync (a torn entry fails the reader's check and is
// recomputed), a hit renews the entry's lifetime, and past the size bound the sweep deletes the
// entries nearest to expiry (the least recently used) until a fifth of the bound is free.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { ENTRY_KEY_PATTERN, type KeyedEntries } from './common.js';
import { Sweeper } from './sweeper.js';

const TEMP_PREFIX = '.tmp-';
const TEMP_GRACE_MS = 15 * 60_000;

export interface DiskEntriesOptions {
  /** The directory of the entries (created 0700). */
  dir: string;
  ttlSeconds: number;
  maxBytes: number;
  /** How often the sweep runs; default min(ttl, 60 s). */
  sweepIntervalMs?: number;
  now?: () => number;
  onError?: (err: unknown) => void;
}

export class DiskEntries implements KeyedEntries {
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly sweeper: Sweeper;
  private opened: Promise<void> | undefined;
  /** Bytes held, as of the last sweep plus this process's puts since. */
  private bytes = 0;
  private sweeping: Promise<void> | undefined;

  constructor(private readonly options: DiskEntriesOptions) {
    this.ttlMs = options.ttlSeconds * 1000;
    this.now = options.now ?? Date.now;
    this.sweeper = new Sweeper(() => this.sweep(), options.sweepIntervalMs ?? Math.min(this.ttlMs, 60_000), options.onError ?? (() => {}));
  }

  private open(): Promise<void> {
    this.opened ??= (async () => {
      await mkdir(this.options.dir, { recursive: true, mode: 0o700 });
      await this.sweep();
      this.sweeper.start();
    })();
    return this.opened;
  }

  /** The entry's bytes, or undefined (unknown, expired, unreadable). */
  async get(key: string): Promise<Buffer | undefined> {
    if (!ENTRY_KEY_PATTERN.test(key)) return undefined;
    await this.open();
    const path = join(this.options.dir, key);
    try {
      const info = await stat(path);
      if (info.mtimeMs <= this.now()) return undefined;
      const data = await readFile(path);
      const expiry = (this.now() + this.ttlMs) / 1000;
      void utimes(path, expiry, expiry).catch(() => {}); // used again: kept longer
      return data;
    } catch {
      return undefined;
    }
  }

  /** Writes the entry (replacing any); throws when it cannot (no room: the caller drops it). */
  async put(key: string, data: Buffer): Promise<void> {
    if (!ENTRY_KEY_PATTERN.test(key)) throw new Error('bad cache key');
    if (data.length > this.options.maxBytes) throw new Error('entry larger than the cache');
    await this.open();
    if (this.bytes + data.length > this.options.maxBytes) await this.sweep();
    const temp = join(this.options.dir, `${TEMP_PREFIX}${this.now()}-${randomBytes(9).toString('base64url')}`);
    try {
      const handle = await open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(data);
        const expiry = (this.now() + this.ttlMs) / 1000;
        await handle.utimes(expiry, expiry);
      } finally {
        await handle.close();
      }
      await rename(temp, join(this.options.dir, key));
    } catch (err) {
      await rm(temp, { force: true }).catch(() => {});
      throw err;
    }
    this.bytes += data.length;
  }

  /** Deletes expired entries and abandoned temporary files, then the oldest while over the bound. */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepOnce().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    const now = this.now();
    const kept: Array<{ path: string; expires: number; size: number }> = [];
    for (const name of await readdir(this.options.dir)) {
      const path = join(this.options.dir, name);
      let info;
      try {
        info = await stat(path);
      } catch {
        continue; // deleted by another process meanwhile
      }
      if (name.startsWith(TEMP_PREFIX)) {
        if (now - info.ctimeMs > TEMP_GRACE_MS) await rm(path, { force: true });
      } else if (ENTRY_KEY_PATTERN.test(name)) {
        if (info.mtimeMs <= now) await rm(path, { force: true });
        else kept.push({ path, expires: info.mtimeMs, size: info.size });
      }
    }
    let bytes = kept.reduce((sum, entry) => sum + entry.size, 0);
    if (bytes > this.options.maxBytes) {
      kept.sort((a, b) => a.expires - b.expires);
      for (const entry of kept) {
        if (bytes <= this.options.maxBytes * 0.8) break;
        await rm(entry.path, { force: true });
        bytes -= entry.size;
      }
    }
    this.bytes = bytes;
  }

  async close(): Promise<void> {
    this.sweeper.stop();
    await this.sweeping?.catch(() => {});
  }
}
