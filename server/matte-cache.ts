// The server's matte cache (docs/api.md, "The matte cache"): the library's MatteCache over a keyed
// area of the result store, so every process sharing the store shares the mattes. On by default,
// off with MATTE_MATTE_CACHE_MAX_BYTES=0; an entry that cannot be written (no room, the store
// failing) is dropped and the answer is not delayed by it. The library gives every lookup and
// write a deadline (lib/matte-cache.ts); the writes in flight are bounded as cache-writes.ts says.
import type { Logger } from 'pino';
import type { MatteCache } from '../lib/index.js';
import { CacheWrites, openCacheArea } from './cache-writes.js';
import type { Config } from './config.js';
import type { Metrics } from './metrics.js';
import type { ResultStore } from './store/index.js';

export interface ServerMatteCache extends MatteCache {
  /** Stops the sweeps and waits (at most WRITE_DEADLINE_MS) for the writes in flight; later writes are dropped. */
  close(): Promise<void>;
}

/** The matte cache of this configuration, or undefined when it is off or the store has no keyed area. */
export function createMatteCache(config: Config, store: ResultStore, metrics: Metrics, logger: Logger): ServerMatteCache | undefined {
  const entries = openCacheArea(store, { name: 'matte-cache', ttlSeconds: config.matteCacheTtlSeconds, maxBytes: config.matteCacheMaxBytes, maxEntries: config.matteCacheMaxEntries }, logger);
  if (!entries) return undefined;
  // Writes happen after the answer: a server closing waits for them (the store gives up what it
  // cannot finish), so none outlives it.
  const writes = new CacheWrites('matte cache');
  return {
    get: (key) => entries.get(key),
    put: (key, entry) => writes.add(() => entries.put(key, Buffer.from(entry.buffer, entry.byteOffset, entry.byteLength))),
    report: (outcome) => metrics.matteCacheEvent(outcome),
    close: async () => {
      await writes.close();
      await entries.close();
    },
  };
}
