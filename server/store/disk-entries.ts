// A keyed area beside the results of the disk store, for caches that every process sharing the
// directory shares (the matte cache, server/matte-cache.ts): `<results dir>/matte-cache/<key>`,
// one file an entry, its modification time its expiry, as the results' (store/disk.ts). Unlike
// results, entries may vanish at any time: no fsync (a torn entry fails the reader's check and is
// recomputed), a hit renews the entry's lifetime (once a tenth of it has passed), and past either bound (the space the entries
// take, disk-space.ts, and their number) the sweep deletes the entries nearest to expiry (the
// least recently used) until a fifth of both is free (eviction.ts: two passes, in batches).
// A lookup reads only a regular file (a FIFO or a device in an entry's place is a miss, never a
// read that waits for a writer), opened without blocking and no larger than the bound.
import { constants } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_BLOCK_BYTES, ENTRY_KEY_PATTERN, storedCost, type KeyedEntries } from './common.js';
import { blockSizeOf, directoryNames, fileCost } from './disk-space.js';
import { EvictionPlan, NO_ROOM, type Room } from './eviction.js';
import { Sweeper } from './sweeper.js';

const TEMP_PREFIX = '.tmp-';
const TEMP_GRACE_MS = 15 * 60_000;
/** O_NONBLOCK: opening a FIFO returns at once (regular files read as usual); O_NOFOLLOW: no symbolic link. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

export interface DiskEntriesOptions {
  /** The directory of the entries (created 0700). */
  dir: string;
  ttlSeconds: number;
  maxBytes: number;
  maxEntries: number;
  /** How often the sweep runs; default min(ttl, 60 s). */
  sweepIntervalMs?: number;
  now?: () => number;
  onError?: (err: unknown) => void;
}

export class DiskEntries implements KeyedEntries {
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly sweeper: Sweeper;
  private made: Promise<void> | undefined;
  private firstSweep: Promise<void> | undefined;
  private blockSize = DEFAULT_BLOCK_BYTES;
  /** Space and entries held, as of the last sweep plus this process's puts since. */
  private bytes = 0;
  private entries = 0;
  private sweeping: Promise<void> | undefined;

  constructor(private readonly options: DiskEntriesOptions) {
    this.ttlMs = options.ttlSeconds * 1000;
    this.now = options.now ?? Date.now;
    this.sweeper = new Sweeper(() => this.sweep(), options.sweepIntervalMs ?? Math.min(this.ttlMs, 60_000), options.onError ?? (() => {}));
  }

  /** The directory, made once; the first sweep starts then and runs on its own (a lookup never waits for it). */
  private ready(): Promise<void> {
    this.made ??= (async () => {
      await mkdir(this.options.dir, { recursive: true, mode: 0o700 });
      this.blockSize = await blockSizeOf(this.options.dir);
      this.firstSweep = this.sweep();
      this.firstSweep.catch(this.options.onError ?? (() => {}));
      this.sweeper.start();
    })();
    return this.made;
  }

  /** The entry's bytes, or undefined (unknown, expired, not a regular file, too large, unreadable). */
  async get(key: string): Promise<Buffer | undefined> {
    if (!ENTRY_KEY_PATTERN.test(key)) return undefined;
    try {
      await this.ready();
      const handle = await open(join(this.options.dir, key), READ_FLAGS);
      try {
        const info = await handle.stat();
        if (!info.isFile() || info.mtimeMs <= this.now() || info.size > this.options.maxBytes) return undefined;
        const data = await handle.readFile();
        // Used again: kept longer, once a tenth of its lifetime has passed (not a write every hit).
        const renewed = this.now() + this.ttlMs;
        if (renewed - info.mtimeMs > this.ttlMs / 10) await handle.utimes(renewed / 1000, renewed / 1000).catch(() => {});
        return data;
      } finally {
        await handle.close();
      }
    } catch {
      return undefined;
    }
  }

  /** Writes the entry (replacing any); throws when it cannot (no room: the caller drops it). */
  async put(key: string, data: Buffer): Promise<void> {
    if (!ENTRY_KEY_PATTERN.test(key)) throw new Error('bad cache key');
    await this.ready();
    const cost = storedCost(data.length, this.blockSize);
    if (cost > this.options.maxBytes) throw new Error('entry larger than the cache');
    await this.firstSweep?.catch(() => {});
    // Room for this entry: a sweep already running may not have made it, so at most one more.
    for (let i = 0; i < 2 && (this.bytes + cost > this.options.maxBytes || this.entries + 1 > this.options.maxEntries); i++) await this.sweep({ bytes: cost, entries: 1 });
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
    this.bytes += cost;
    this.entries += 1;
  }

  /** Deletes expired entries and abandoned temporary files, then the oldest while over a bound (with `room` left). */
  sweep(room: Room = NO_ROOM): Promise<void> {
    this.sweeping ??= this.sweepOnce(room).finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** Each live entry's expiry, cost and path, read in batches; what is expired or abandoned is deleted on the way. */
  private async *live(now: number): AsyncGenerator<{ path: string; expires: number; cost: number }> {
    for await (const name of directoryNames(this.options.dir)) {
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
        else yield { path, expires: info.mtimeMs, cost: fileCost(info, this.blockSize) };
      }
    }
  }

  private async sweepOnce(room: Room): Promise<void> {
    const now = this.now();
    const plan = new EvictionPlan(now, this.ttlMs);
    for await (const entry of this.live(now)) plan.add(entry.expires, entry.cost);
    let { total: bytes, entries } = plan;
    if (plan.plan(this.options.maxBytes, this.options.maxEntries, room)) {
      for await (const entry of this.live(now)) {
        if (!plan.evicts(entry.expires, entry.cost)) continue;
        await rm(entry.path, { force: true });
        bytes -= entry.cost;
        entries -= 1;
      }
    }
    this.bytes = bytes;
    this.entries = entries;
  }

  async close(): Promise<void> {
    this.sweeper.stop();
    await this.sweeping?.catch(() => {});
  }
}
