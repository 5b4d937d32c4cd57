// The result store: where `output=url` results live for their lifetime (docs/api.md,
// "Stored results"). The server only talks to the ResultStore interface (common.ts, with what the
// stores share). Two implementations, both safe to share between any number of server processes (no
// process keeps state another one needs):
//   disk (default)  server/store/disk.ts, one file a result in MATTE_RESULTS_DIR
//   s3              server/store/s3.ts, one object a result in an S3-compatible bucket
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { ResultStore } from './common.js';
import { DiskResultStore } from './disk.js';
import { S3ResultStore } from './s3.js';

/** The store the configuration asks for (opened later by startServer). */
export function createStore(config: Config, logger: Logger): ResultStore {
  const onError = (err: unknown) => logger.error({ err }, 'result sweep failed');
  if (config.resultsStore === 's3') {
    return new S3ResultStore({ ...config.s3!, presign: config.resultsPresign, ttlSeconds: config.resultTtlSeconds, maxBytes: config.resultsMaxBytes, maxEntries: config.resultsMaxEntries, onError, logger });
  }
  return new DiskResultStore({ dir: config.resultsDir, ttlSeconds: config.resultTtlSeconds, maxBytes: config.resultsMaxBytes, maxEntries: config.resultsMaxEntries, onError });
}

export type { ResultStore, StoredResult } from './common.js';
export { newResultId } from './common.js';
export { DiskResultStore } from './disk.js';
export { S3ResultStore } from './s3.js';
