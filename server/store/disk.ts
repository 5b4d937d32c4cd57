// The default result store: one file a result in a directory.
//
//   <dir>/<id>.<expiresAtMs>.<ext>    a committed result (the name carries its expiry)
//   <dir>/.tmp-<random>               a result being written
//
// A result is written to a temporary name, fsync'ed, renamed to its final name and the directory
// fsync'ed, so a crash never leaves a half file under a result name. At open, leftover temporary
// files and expired results are deleted and the rest indexed: a restart keeps unexpired results.
// ids are 144 random bits in base64url (24 characters), which contains no '.'.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { ResultStore, StoredResult } from './index.js';

const ID_PATTERN = /^[A-Za-z0-9_-]{24}$/;
const NAME_PATTERN = /^([A-Za-z0-9_-]{24})\.(\d{1,16})\.([a-z0-9]{1,8})$/;
const TEMP_PREFIX = '.tmp-';

export function newResultId(): string {
  return randomBytes(18).toString('base64url');
}

export interface DiskStoreOptions {
  dir: string;
  ttlSeconds: number;
  /** How often the sweeper runs; default min(ttl, 60 s). 0 turns it off. */
  sweepIntervalMs?: number;
  now?: () => number;
  onError?: (err: unknown) => void;
}

interface Entry extends StoredResult {
  file: string;
}

export class DiskResultStore implements ResultStore {
  private readonly dir: string;
  private readonly ttlMs: number;
  private readonly sweepIntervalMs: number;
  private readonly now: () => number;
  private readonly onError: (err: unknown) => void;
  private readonly index = new Map<string, Entry>();
  private timer: NodeJS.Timeout | undefined;

  constructor(options: DiskStoreOptions) {
    this.dir = options.dir;
    this.ttlMs = options.ttlSeconds * 1000;
    this.sweepIntervalMs = options.sweepIntervalMs ?? Math.min(this.ttlMs, 60_000);
    this.now = options.now ?? Date.now;
    this.onError = options.onError ?? (() => {});
  }

  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const now = this.now();
    for (const name of await readdir(this.dir)) {
      const path = join(this.dir, name);
      if (name.startsWith(TEMP_PREFIX)) {
        await rm(path, { force: true });
        continue;
      }
      const match = NAME_PATTERN.exec(name);
      if (!match) continue; // not ours: left alone
      const [, id, expires, ext] = match as unknown as [string, string, string, string];
      const expiresAt = Number(expires);
      if (expiresAt <= now) {
        await rm(path, { force: true });
        continue;
      }
      let size: number;
      try {
        size = (await stat(path)).size;
      } catch {
        continue;
      }
      this.index.set(id, this.entry(id, ext, expiresAt, size, name));
    }
    if (this.sweepIntervalMs > 0) {
      this.timer = setInterval(() => this.sweep().catch(this.onError), this.sweepIntervalMs);
      this.timer.unref();
    }
  }

  private entry(id: string, ext: string, expiresAt: number, size: number, file: string): Entry {
    return { id, ext, mediaType: mediaTypeOfExt(ext), size, expiresAt, etag: `"${id}"`, file };
  }

  async put(data: Buffer, meta: { ext: string; mediaType: string }): Promise<StoredResult> {
    if (!/^[a-z0-9]{1,8}$/.test(meta.ext)) throw new Error(`bad extension ${meta.ext}`);
    const id = newResultId();
    const expiresAt = this.now() + this.ttlMs;
    const name = `${id}.${expiresAt}.${meta.ext}`;
    const temp = join(this.dir, `${TEMP_PREFIX}${randomBytes(9).toString('base64url')}`);
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } catch (err) {
      await handle.close().catch(() => {});
      await unlink(temp).catch(() => {});
      throw err;
    }
    await handle.close();
    try {
      await rename(temp, join(this.dir, name));
    } catch (err) {
      await unlink(temp).catch(() => {});
      throw err;
    }
    await syncDir(this.dir);
    const entry = { ...this.entry(id, meta.ext, expiresAt, data.length, name), mediaType: meta.mediaType };
    this.index.set(id, entry);
    const { file: _file, ...result } = entry;
    return result;
  }

  async get(id: string): Promise<StoredResult | undefined> {
    if (!ID_PATTERN.test(id)) return undefined;
    const entry = this.index.get(id);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      await this.remove(entry);
      return undefined;
    }
    const { file: _file, ...result } = entry;
    return result;
  }

  async read(result: StoredResult, range?: { start: number; end: number }): Promise<Readable | undefined> {
    const entry = this.index.get(result.id);
    if (!entry) return undefined;
    let handle;
    try {
      handle = await open(join(this.dir, entry.file), 'r'); // opened before answering: a sweep after this is harmless
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async sweep(): Promise<number> {
    const now = this.now();
    let removed = 0;
    for (const entry of [...this.index.values()]) {
      if (entry.expiresAt <= now) {
        await this.remove(entry);
        removed++;
      }
    }
    return removed;
  }

  private async remove(entry: Entry): Promise<void> {
    this.index.delete(entry.id);
    await rm(join(this.dir, entry.file), { force: true });
  }

  async writable(): Promise<boolean> {
    const probe = join(this.dir, `${TEMP_PREFIX}probe-${randomBytes(6).toString('hex')}`);
    try {
      const handle = await open(probe, 'wx', 0o600);
      await handle.close();
      await unlink(probe);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
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

const EXT_MEDIA_TYPES: Record<string, string> = {
  png: 'image/png',
  webp: 'image/webp',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  avif: 'image/avif',
};

function mediaTypeOfExt(ext: string): string {
  return EXT_MEDIA_TYPES[ext] ?? 'application/octet-stream';
}
