// The multipart form of both image endpoints (docs/api.md, "The form (both image endpoints)"),
// read into memory within its limits; an uploaded `input` file is kept by upload-storage.ts.
import multer from '@koa/multer';
import type { Context, Middleware } from 'koa';
import { HttpError } from '../errors.js';
import { UploadStorage } from './upload-storage.js';

/** Largest text field (operations JSON, a URL, ...). */
export const MAX_FIELD_BYTES = 64 * 1024;
/** Text fields and parts a form may hold (the endpoints use at most 15). */
export const MAX_FIELDS = 20;
/** The file parts an endpoint may take, besides `input` (each only where the endpoint lists it). */
const FILE_FIELDS = ['input', 'background_image'];
/** What a form may add to the upload limit: the text fields and the part headers. */
export const FORM_OVERHEAD_BYTES = 1024 * 1024;

/** Marks requests that came with `Expect: 100-continue` (set by the server's checkContinue). */
export const EXPECTS_CONTINUE = Symbol('matte.expectsContinue');

export interface Form {
  /** Text fields, each given once. */
  fields: Record<string, string>;
  /** The uploaded `input` file, if any. */
  file?: Buffer;
  /** The uploaded `background_image` file, if any (the endpoints that take one). */
  backgroundImage?: Buffer;
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
        return new HttpError(400, 'invalid_field', 'at most one input file and one background_image file may be uploaded', { path: 'input', closeConnection: true });
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
        files: 2,
        fields: MAX_FIELDS,
        parts: MAX_FIELDS + 2,
        fieldSize: MAX_FIELD_BYTES,
        fieldNameSize: 100,
        headerPairs: 20,
      },
      fileFilter: (_req, file, cb) => {
        if (FILE_FIELDS.includes(file.fieldname) && options.allowed.includes(file.fieldname)) cb(null, true);
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
 * `maxInputBytes` (413 input_too_large), a few short text fields, one file named `input` and, where
 * the endpoint takes it, one named `background_image` (any other file part is refused as soon as
 * its header arrives), and the whole body within `timeoutMs`
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
  const form: Form = { fields };
  for (const file of parsed.files) {
    const name = file.fieldname;
    if (fields[name] !== undefined) throw new HttpError(400, 'invalid_field', `${name} is given both as a file and as a URL; send one`, { path: name });
    if ((name === 'input' ? form.file : form.backgroundImage) !== undefined) throw new HttpError(400, 'invalid_field', `${name} is given more than once`, { path: name });
    if (name === 'input') form.file = file.buffer;
    else form.backgroundImage = file.buffer;
  }
  return form;
}

function unknownField(name: string, allowed: readonly string[]): HttpError {
  return new HttpError(400, 'unknown_field', `unknown field "${name}" (this endpoint takes ${allowed.join(', ')})`, { path: name, closeConnection: true });
}
