// Typed errors of the library. `code` is stable and machine-readable (the server maps it to an
// HTTP status, see server/errors.ts); `path` points at the offending input where there is one.

/** Every code the library can give. */
export type MatteErrorCode =
  | 'invalid_operations' // the operation list breaks the schema, or a step would exceed a limit
  | 'invalid_json'
  | 'invalid_field'
  | 'invalid_option'
  | 'unsupported_image' // not one of the accepted types, empty, truncated or undecodable
  | 'image_too_large' // over the pixel, frame or matte-frame limit
  | 'model_error' // missing model, wrong shape, inference failure
  | 'invalid_input' // the input is not a Buffer or its file cannot be read
  | 'job_timeout' // the job ran past its time budget (`timeout`) and was stopped
  | 'aborted' // the job's AbortSignal was aborted and the job was stopped
  | 'internal';

export class MatteError extends Error {
  readonly code: MatteErrorCode;
  readonly path?: string;

  constructor(code: MatteErrorCode, message: string, path?: string) {
    super(message);
    this.name = 'MatteError';
    this.code = code;
    if (path !== undefined) this.path = path;
  }
}

/** Turns an error thrown by the addon (an Error with a `code` property) into a MatteError. */
export function fromNativeError(err: unknown): MatteError {
  if (err instanceof MatteError) return err;
  const e = err as { code?: string; message?: string; path?: string };
  const known: MatteErrorCode[] = ['invalid_operations', 'unsupported_image', 'image_too_large', 'model_error', 'job_timeout', 'aborted'];
  const code = known.includes(e?.code as MatteErrorCode) ? (e.code as MatteErrorCode) : 'internal';
  return new MatteError(code, e?.message ?? String(err), e?.path);
}
