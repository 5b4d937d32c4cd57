// The multipart form of both image endpoints (docs/api.md, "The form (both image endpoints)"),
// read into memory within its limits; an uploaded `input` file is kept by upload-storage.ts.
import multer from '@koa/multer';
import type { Context, Middleware } from 'koa';
import { HttpError } from '../errors.js';
import { UploadStorage } from './upload-storage.js';

/** Largest text field (operations JSON, a URL, ...). */
export const MAX_FIELD_BYTES = 64 * 1024;
/** Text fields and parts a form may hold (the endpoints use at most 6). */
export const MAX_FIELDS = 16;
/** What a form may add to the upload limit: the text fields and the part headers. */
export const FORM_OVERHEAD_BYTES = 1024 * 1024;

/** Marks requests that came with `Expect: 100-continue` (set by the server's checkContinue). */
export const EXPECTS_CONTINUE = Symbol('matte.expectsContinue');

export interface Form {
  /** Text fields, each given once. */
  fields: Record<string, string>;
  /** The uploaded `input` file, if any. */
  file?: Buffer;
}

export interface FormOptions {
  /** Field names the endpoint accepts (text or, for `input`, file). */
  allowed: readonly string[];
  maxInputBytes: number;
  /** Time allowed to receive the whole body. */
  timeoutMs: number;
}

const formError = (message: string, options: { path?: string } = {}) =>
  new HttpError(400, 'invalid_multipart', message, { ...options, closeConnection: true });

function tooLarge(limit: number): HttpError {
  return new HttpError(413, 'input_too_large', `the upload is larger than the limit of ${limit} bytes`, { closeConnection: true });
}

function multerToHttp(err: unknown, maxInputBytes: number): HttpError {
  if (err instanceof HttpError) return err;
  const e = err as { name?: string; code?: string; field?: string; message?: string };
  if (e?.name === 'MulterError') {
    switch (e.code) {
      case 'LIMIT_FILE_SIZE':
        return tooLarge(maxInputBytes);
      case 'LIMIT_FILE_COUNT':
        return new HttpError(400, 'invalid_field', 'only one file may be uploaded, as input', { path: 'input', closeConnection: true });
      case 'LIMIT_FIELD_COUNT':
      case 'LIMIT_PART_COUNT':
        return new HttpError(400, 'invalid_field', `the form has more than ${MAX_FIELDS} fields`, { closeConnection: true });
      case 'LIMIT_FIELD_VALUE':
        return new HttpError(400, 'invalid_field', `${e.field ?? 'a field'} is longer than ${MAX_FIELD_BYTES} bytes`, { path: e.field, closeConnection: true });
      case 'LIMIT_FIELD_KEY':
        return new HttpError(400, 'invalid_field', 'a field name is too long', { closeConnection: true });
      default:
        return formError(`malformed multipart body: ${e.message ?? e.code}`);
    }
  }
  return formError(`malformed multipart body: ${e?.message ?? 'cannot be parsed'}`);
}

/**
 * The multer middleware of an endpoint, made once per field list and size limit rather than per
 * request (the endpoints pass constant lists).
 */
const uploads = new WeakMap<readonly string[], Map<number, Middleware>>();
function uploadMiddleware(options: FormOptions): Middleware {
  let bySize = uploads.get(options.allowed);
  if (!bySize) uploads.set(options.allowed, (bySize = new Map()));
  let upload = bySize.get(options.maxInputBytes);
  if (!upload) {
    upload = multer({
      // A one-chunk upload is not copied (upload-storage.ts). @types/koa__multer types an engine's
      // answer as a whole File; multer merges the partial answer into the file it describes.
      storage: new UploadStorage() as unknown as multer.StorageEngine,
      limits: {
        fileSize: options.maxInputBytes,
        files: 1,
        fields: MAX_FIELDS,
        parts: MAX_FIELDS + 1,
        fieldSize: MAX_FIELD_BYTES,
        fieldNameSize: 100,
        headerPairs: 20,
      },
      fileFilter: (_req, file, cb) => {
        if (file.fieldname === 'input') cb(null, true);
        else if (options.allowed.includes(file.fieldname)) cb(new HttpError(400, 'invalid_field', `${file.fieldname} must be a text field, not a file (with curl: -F '${file.fieldname}=<file')`, { path: file.fieldname, closeConnection: true }), false);
        else cb(unknownField(file.fieldname, options.allowed), false);
      },
    }).any();
    bySize.set(options.maxInputBytes, upload);
  }
  return upload;
}

/**
 * Reads the multipart form of an image request into memory, within limits: the upload at most
 * `maxInputBytes` (413 input_too_large), a few short text fields, one file named `input` (any other
 * file part is refused as soon as its header arrives), and the whole body within `timeoutMs`
 * (408 request_timeout). Unknown and repeated fields are refused (400).
 */
export async function readForm(ctx: Context, options: FormOptions): Promise<Form> {
  const req = ctx.req;
  if (!ctx.is('multipart/form-data')) {
    throw formError('the body must be multipart/form-data (a form with an input field)');
  }
  const totalLimit = options.maxInputBytes + FORM_OVERHEAD_BYTES;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > totalLimit) throw tooLarge(options.maxInputBytes);

  const upload = uploadMiddleware(options);
  if ((req as unknown as Record<symbol, unknown>)[EXPECTS_CONTINUE] && !ctx.res.headersSent) ctx.res.writeContinue();

  const parsed = await new Promise<{ body: Record<string, unknown>; files: multer.File[] }>((resolve, reject) => {
    let received = 0;
    let settled = false;
    const finish = (err?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.off('data', count);
      req.off('close', onClose);
      if (err) {
        // Stop parsing what is left; the response is sent and the rest drained (drainUnreadBody).
        req.unpipe();
        reject(err);
      } else {
        resolve({ body: (ctx.request as { body?: Record<string, unknown> }).body ?? {}, files: (ctx.request.files as multer.File[] | undefined) ?? [] });
      }
    };
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received > totalLimit) finish(tooLarge(options.maxInputBytes));
    };
    const onClose = () => {
      if (!req.complete) finish(new HttpError(400, 'client_closed', 'the client closed the connection before the body was sent'));
    };
    const timer = setTimeout(
      () => finish(new HttpError(408, 'request_timeout', `the request body was not received within ${Math.round(options.timeoutMs / 1000)} s`, { closeConnection: true })),
      options.timeoutMs,
    );
    // multer pipes the request into busboy synchronously; the counter listens alongside it.
    upload(ctx, async () => {}).then(
      () => finish(),
      (err: unknown) => finish(multerToHttp(err, options.maxInputBytes)),
    );
    req.on('data', count);
    req.on('close', onClose);
  });

  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed.body)) {
    if (!options.allowed.includes(name)) throw unknownField(name, options.allowed);
    if (Array.isArray(value)) throw new HttpError(400, 'invalid_field', `${name} is given more than once`, { path: name });
    if (typeof value !== 'string') throw new HttpError(400, 'invalid_field', `${name} must be a single text value`, { path: name });
    fields[name] = value;
  }
  const file = parsed.files[0];
  if (file && fields.input !== undefined) {
    throw new HttpError(400, 'invalid_field', 'input is given both as a file and as a URL; send one', { path: 'input' });
  }
  return file ? { fields, file: file.buffer } : { fields };
}

function unknownField(name: string, allowed: readonly string[]): HttpError {
  return new HttpError(400, 'unknown_field', `unknown field "${name}" (this endpoint takes ${allowed.join(', ')})`, { path: name, closeConnection: true });
}
