// What the server's caches over the store's keyed area (the matte cache, the result cache) share:
// their area, opened with its bounds unless the cache is off; and their writes, which happen after
// the answer, at most MAX_WRITES_IN_FLIGHT waiting for the store at once (a store that stops
// answering holds that many entries in memory, later ones are dropped), a server closing waiting
// for those in flight at most WRITE_DEADLINE_MS.
import type { Logger } from 'pino';
import { withDeadline, WRITE_DEADLINE_MS } from '../lib/matte-cache.js';
import type { KeyedEntries, KeyedEntriesOptions, ResultStore } from './store/common.js';

/** The cache's keyed area of the store, or undefined when the cache is off (maxBytes 0) or the store has none. */
export function openCacheArea(store: ResultStore, options: Omit<KeyedEntriesOptions, 'onError'>, logger: Logger): KeyedEntries | undefined {
  if (options.maxBytes === 0 || !store.entries) return undefined;
  return store.entries({ ...options, onError: (err) => logger.warn({ err }, `${options.name} sweep failed`) });
}

/** Writes waiting for the store at once; past it an entry is dropped rather than held. */
export const MAX_WRITES_IN_FLIGHT = 32;

export class CacheWrites {
  private readonly writing = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly what: string) {}

  /** Starts `write` unless closed or too many are in flight (then rejects: the caller drops the entry). */
  add(write: () => Promise<void>): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`the ${this.what} is closed`));
    if (this.writing.size >= MAX_WRITES_IN_FLIGHT) return Promise.reject(new Error(`the store is not keeping up with the ${this.what}`));
    const running = write().finally(() => this.writing.delete(running));
    this.writing.add(running);
    return running;
  }

  /** Refuses later writes and waits (at most WRITE_DEADLINE_MS) for those in flight. */
  async close(): Promise<void> {
    this.closed = true;
    await withDeadline(Promise.allSettled([...this.writing]), WRITE_DEADLINE_MS, true);
  }
}
