// How a result store's failures reach the client (docs/api.md "Stored results"): never a 500 and
// never a result reported as stored when it is not.
//
//   507 insufficient_storage  the store has no room: the disk or its quota is full (ENOSPC,
//                             EDQUOT, EFBIG) or MATTE_RESULTS_MAX_BYTES is reached. Room comes
//                             back as results expire; output=raw still works.
//   503 store_unavailable     the store cannot be used now: permissions (EACCES, EPERM), a
//                             read-only or failing file system (EROFS, EIO, ...), an object store
//                             that is unreachable or refuses the credentials. /readyz is 503 too.
import { HttpError } from '../errors.js';

const FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);

export function insufficientStorage(message = 'the result store is full; retry later or use output=raw', cause?: unknown): HttpError {
  return new HttpError(507, 'insufficient_storage', message, { headers: { 'Retry-After': '60' }, cause });
}

export function storeUnavailable(cause?: unknown): HttpError {
  return new HttpError(503, 'store_unavailable', 'the result store is unavailable; retry later or use output=raw', {
    headers: { 'Retry-After': '5' },
    cause,
  });
}

/** The client-facing error for a failed store operation (an HttpError already made is kept). */
export function storeError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code !== undefined && FULL_CODES.has(code)) return insufficientStorage(undefined, err);
  return storeUnavailable(err);
}

/** A problem found while opening a store (bad directory, missing SDK): stops the start-up. */
export class StoreSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreSetupError';
  }
}
