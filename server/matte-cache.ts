// The server's matte cache (docs/api.md, "The matte cache"): the library's MatteCache over a keyed
// area of the result store, so every process sharing the store shares the mattes. On by default,
// off with MATTE_MATTE_CACHE_MAX_BYTES=0; an entry that cannot be written (no room, the store
// failing) is dropped and the answer is not delayed by it. The library gives every lookup and
// write a deadline (lib/matte-cache.ts); here a store that stops answering holds at most
// MAX_WRITES_IN_FLIGHT entries in memory (later ones are dropped), and a server closing waits for
// the writes in flight at most WRITE_DEADLINE_MS.
import type { Logger } from 'pino';
import type { MatteCache } from '../lib/index.js';
import { withDeadline, WRITE_DEADLINE_MS } from '../lib/matte-cache.js';
import type { Config } from './config.js';
import type { Metrics } from './metrics.js';
import type { ResultStore } from './store/index.js';

/** Writes waiting for the store at once; past it an entry is dropped rather than held. */
const MAX_WRITES_IN_FLIGHT = 32;

export interface ServerMatteCache extends MatteCache {
  /** Stops the sweeps and waits (at most WRITE_DEADLINE_MS) for the writes in flight; later writes are dropped. */
  close(): Promise<void>;
}

/** The matte cache of this configuration, or undefined when it is off or the store has no keyed area. */
export function createMatteCache(config: Config, store: ResultStore, metrics: Metrics, logger: Logger): ServerMatteCache | undefined {
  if (config.matteCacheMaxBytes === 0 || !store.entries) return undefined;
  const entries = store.entries({
    name: 'matte-cache',
    ttlSeconds: config.matteCacheTtlSeconds,
    maxBytes: config.matteCacheMaxBytes,
    maxEntries: config.matteCacheMaxEntries,
    onError: (err) => logger.warn({ err }, 'matte cache sweep failed'),
  });
  // Writes happen after the answer: a server closing waits for them (the store gives up what it
  // cannot finish), so none outlives it.
  const writing = new Set<Promise<void>>();
  let closed = false;
  return {
    get: (key) => entries.get(key),
    put: (key, entry) => {
      if (closed) return Promise.reject(new Error('the matte cache is closed'));
      if (writing.size >= MAX_WRITES_IN_FLIGHT) return Promise.reject(new Error('the store is not keeping up with the matte cache'));
      const write = entries.put(key, Buffer.from(entry.buffer, entry.byteOffset, entry.byteLength)).finally(() => writing.delete(write));
      writing.add(write);
      return write;
    },
    report: (outcome) => metrics.matteCacheEvent(outcome),
    close: async () => {
      closed = true;
      await withDeadline(Promise.allSettled([...writing]), WRITE_DEADLINE_MS, true);
      await entries.close();
    },
  };
}
