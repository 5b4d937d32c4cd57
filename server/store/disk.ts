// The default result store: one file a result in a directory that any number of server processes
// may share (on one machine or over a network file system). The directory is the truth: no process
// keeps an index, so a result one process stored is downloadable from every other at once.
//
//   <dir>/<id>.<ext>                    a committed result; its modification time is its expiry
//   <dir>/.tmp-<createdMs>-<random>     a result (or a /readyz probe) being written
//   <dir>/<name>/                       a keyed area (entries(): the matte cache), disk-entries.ts
//
// put: the bytes go to a temporary file, its mtime is set to the expiry, both are fsync'ed, and
// it is renamed to its final name (then the directory is fsync'ed). The rename commits bytes and
// expiry at once: a crash never leaves a half file or a file without its expiry under a result
// name. get: one stat of <id>.<ext> (size, expiry). The sweeper (every process runs one) deletes
// results whose mtime has passed and temporary files older than `tempGraceMs` (a writer that died);
// several sweepers racing only ever delete expired or abandoned files, and a delete that finds the
// file already gone is fine. ids are 144 random bits in base64url (24 characters, never a '.').
//
// Results written by the previous layout (<id>.<expiresAtMs>.<ext>) are renamed to this one by
// the first sweep, so an upgrade loses nothing. The quota (quota.ts) counts the space each result
// takes (disk-space.ts: its allocated blocks, whole blocks at least) and the number of results; the
// sweep reads the directory in batches.
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, open, rename, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { storeError, StoreSetupError } from './errors.js';
import { DEFAULT_BLOCK_BYTES, defaultSweepIntervalMs, etagOf, EXT_PATTERN, ID_PATTERN, mediaTypeOfExt, newResultId, RESULT_NAME_PATTERN, storedCost, type KeyedEntries, type KeyedEntriesOptions, type ResultStore, type StoredResult } from './common.js';
import { DiskEntries } from './disk-entries.js';
import { blockSizeOf, directoryNames, fileCost } from './disk-space.js';
import { ResultsQuota } from './quota.js';
import { Sweeper } from './sweeper.js';

const OLD_NAME_PATTERN = /^([A-Za-z0-9_-]{24})\.(\d{1,16})\.([a-z0-9]{1,8})$/;
const TEMP_PREFIX = '.tmp-';
const TEMP_PATTERN = /^\.tmp-(\d{1,16})-/;
/** A temporary file this old belongs to a writer that died (a put takes seconds at most). */
const DEFAULT_TEMP_GRACE_MS = 15 * 60_000;
/** Bytes the /readyz probe writes (and fsyncs): a full disk refuses them, an empty file would not. */
const PROBE_BYTES = 4096;
/** How long a probe's answer is reused, so that /readyz traffic cannot turn into fsync traffic. */
const PROBE_CACHE_MS = 1000;

export interface DiskStoreOptions {
  dir: string;
  ttlSeconds: number;
  /** MATTE_RESULTS_MAX_BYTES (space, in whole blocks); 0 or unset: no bound. */
  maxBytes?: number;
  /** MATTE_RESULTS_MAX_ENTRIES; 0 or unset: no bound. */
  maxEntries?: number;
  /** How often the sweeper runs; default min(ttl, 60 s). 0 turns it off. */
  sweepIntervalMs?: number;
  /** Age after which a temporary file is deleted by a sweep. */
  tempGraceMs?: number;
  now?: () => number;
  onError?: (err: unknown) => void;
}

export class DiskResultStore implements ResultStore {
  readonly kind = 'disk';
  private readonly dir: string;
  private readonly ttlMs: number;
  private readonly tempGraceMs: number;
  private readonly now: () => number;
  private readonly quota: ResultsQuota;
  private readonly sweeper: Sweeper;
  private probe: { at: number; ok: Promise<boolean> } | undefined;
  /** The file system's block size (statfs), read when the store opens. */
  private blockSize = DEFAULT_BLOCK_BYTES;

  constructor(options: DiskStoreOptions) {
    this.dir = options.dir;
    this.ttlMs = options.ttlSeconds * 1000;
    this.tempGraceMs = options.tempGraceMs ?? DEFAULT_TEMP_GRACE_MS;
    this.now = options.now ?? Date.now;
    this.quota = new ResultsQuota(options.maxBytes ?? 0, options.maxEntries ?? 0, () => this.sweep(), this.now);
    this.sweeper = new Sweeper(() => this.sweep(), options.sweepIntervalMs ?? defaultSweepIntervalMs(this.ttlMs), options.onError ?? (() => {}));
  }

  async open(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new StoreSetupError(`MATTE_RESULTS_DIR=${this.dir} cannot be created (${(err as NodeJS.ErrnoException).code ?? err})`);
    }
    await checkDirectory(this.dir);
    this.blockSize = await blockSizeOf(this.dir);
    await this.sweep();
    this.sweeper.start();
  }

  async put(data: Buffer, meta: { ext: string; mediaType: string }): Promise<StoredResult> {
    if (!EXT_PATTERN.test(meta.ext)) throw new Error(`bad extension ${meta.ext}`);
    const id = newResultId();
    const expiresAt = this.now() + this.ttlMs;
    const temp = this.tempPath();
    const cost = storedCost(data.length, this.blockSize);
    try {
      await this.quota.admit(cost);
      await writeDurably(temp, data, expiresAt);
      await rename(temp, join(this.dir, `${id}.${meta.ext}`));
    } catch (err) {
      await rm(temp, { force: true }).catch(() => {});
      throw storeError(err);
    }
    await syncDir(this.dir);
    this.quota.added(cost);
    return { id, ext: meta.ext, mediaType: meta.mediaType, size: data.length, expiresAt, etag: etagOf(id) };
  }

  async get(id: string, ext: string): Promise<StoredResult | undefined> {
    if (!ID_PATTERN.test(id) || !EXT_PATTERN.test(ext)) return undefined;
    let info;
    try {
      info = await stat(join(this.dir, `${id}.${ext}`));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw storeError(err);
    }
    const expiresAt = Math.round(info.mtimeMs);
    if (!info.isFile()) return undefined;
    if (expiresAt <= this.now()) {
      // Expired: 404 even before a sweep; deleting it now is safe for every process (it stays expired).
      await rm(join(this.dir, `${id}.${ext}`), { force: true }).catch(() => {});
      return undefined;
    }
    return { id, ext, mediaType: mediaTypeOfExt(ext), size: info.size, expiresAt, etag: etagOf(id) };
  }

  async read(result: StoredResult, range?: { start: number; end: number }): Promise<Readable | undefined> {
    let handle;
    try {
      handle = await open(join(this.dir, `${result.id}.${result.ext}`), 'r'); // open before answering: a sweep after this is harmless
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw storeError(err);
    }
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async sweep(): Promise<number> {
    const now = this.now();
    let removed = 0;
    let bytes = 0;
    let results = 0;
    for await (const name of directoryNames(this.dir)) {
      const path = join(this.dir, name);
      if (name.startsWith(TEMP_PREFIX)) {
        if (now - (await tempCreatedAt(path, name)) > this.tempGraceMs) await rm(path, { force: true });
        continue;
      }
      const old = OLD_NAME_PATTERN.exec(name);
      if (old) {
        await this.migrate(path, old[1]!, Number(old[2]), old[3]!);
        continue; // counted by the next sweep
      }
      if (!RESULT_NAME_PATTERN.test(name)) continue; // not ours: left alone
      let info;
      try {
        info = await stat(path);
      } catch {
        continue; // deleted by another sweeper meanwhile
      }
      if (info.mtimeMs <= now) {
        await rm(path, { force: true });
        removed++;
      } else {
        bytes += fileCost(info, this.blockSize);
        results++;
      }
    }
    this.quota.scanned(results, bytes);
    return removed;
  }

  /** Moves a result of the previous layout (<id>.<expiresAtMs>.<ext>) to this one. */
  private async migrate(path: string, id: string, expiresAt: number, ext: string): Promise<void> {
    if (expiresAt <= this.now()) {
      await rm(path, { force: true });
      return;
    }
    try {
      await utimes(path, expiresAt / 1000, expiresAt / 1000);
      await rename(path, join(this.dir, `${id}.${ext}`));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // ENOENT: another sweeper moved it
    }
  }

  /** Writes and fsyncs real bytes, then deletes them; the answer is reused for a second. */
  writable(): Promise<boolean> {
    const now = this.now();
    if (this.probe && now - this.probe.at < PROBE_CACHE_MS) return this.probe.ok;
    const temp = this.tempPath();
    const ok = writeDurably(temp, randomBytes(PROBE_BYTES), now + 60_000).then(
      () => rm(temp, { force: true }).then(() => true),
      () => rm(temp, { force: true }).then(() => false, () => false),
    );
    this.probe = { at: now, ok };
    return ok;
  }

  usage(): { results: number; bytes: number } | undefined {
    return this.quota.lastScan;
  }

  /** `<dir>/<name>/<key>` (disk-entries.ts). */
  entries(options: KeyedEntriesOptions): KeyedEntries {
    const { name, ...rest } = options;
    return new DiskEntries({ dir: join(this.dir, name), ...rest });
  }

  async close(): Promise<void> {
    this.sweeper.stop();
  }

  private tempPath(): string {
    return join(this.dir, `${TEMP_PREFIX}${this.now()}-${randomBytes(9).toString('base64url')}`);
  }
}

/** Refuses a directory another local user could read or replace (docs/api.md "Stored results"). */
async function checkDirectory(dir: string): Promise<void> {
  const info = await lstat(dir);
  const refuse = (why: string) => new StoreSetupError(`MATTE_RESULTS_DIR=${dir} ${why}; set MATTE_RESULTS_DIR to a directory of this server's own user`);
  if (info.isSymbolicLink()) throw refuse('is a symbolic link (refused: whoever made it chooses where results go)');
  if (!info.isDirectory()) throw refuse('is not a directory');
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) throw refuse(`is owned by uid ${info.uid}, not by this server's user (uid ${uid})`);
  // Result ids are download capabilities: listing the directory lists them, writing it forges them.
  if (info.mode & 0o077) {
    throw new StoreSetupError(`MATTE_RESULTS_DIR=${dir} is open to group or other users (mode ${(info.mode & 0o7777).toString(8)}; its file names are download capabilities); run \`chmod 700 ${dir}\`, or set MATTE_RESULTS_DIR to a directory of this server's own user`);
  }
}

/** Writes `data` to a new file with its mtime set to `expiresAt`, then fsyncs both. */
async function writeDurably(path: string, data: Buffer, expiresAt: number): Promise<void> {
  const handle = await open(path, 'wx', 0o600);
  try {
    await handle.writeFile(data);
    await handle.utimes(expiresAt / 1000, expiresAt / 1000); // before the fsync, which makes it durable too
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** When a temporary file was created: from its name, else (an older name) its mtime. */
async function tempCreatedAt(path: string, name: string): Promise<number> {
  const match = TEMP_PATTERN.exec(name);
  if (match) return Number(match[1]);
  try {
    return (await stat(path)).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some file systems cannot fsync a directory; the rename itself is still atomic.
  }
}
