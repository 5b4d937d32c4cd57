// The multipart form of both image endpoints (docs/api.md, "The form (both image endpoints)"),
// read into memory within its limits; an uploaded `input` file is kept by upload-storage.ts. The
// remove.bg route reads its form here too, with its own file fields and limits.
import multer from '@koa/multer';
import type { Context, Middleware } from 'koa';
import { HttpError } from '../errors.js';
import { receiveBody, tooLarge } from './body.js';
import { UploadStorage } from './upload-storage.js';

export { EXPECTS_CONTINUE } from './body.js';

/** Largest text field (operations JSON, a URL, ...). */
export const MAX_FIELD_BYTES = 64 * 1024;
/** Text fields and parts a form may hold (the endpoints use at most 15). */
export const MAX_FIELDS = 20;
/** The file parts an endpoint may take unless it names its own (each only where the endpoint lists it). */
const FILE_FIELDS = ['input', 'background_image'];
/** What a form may add to the upload limit: the text fields and the part headers. */
export const FORM_OVERHEAD_BYTES = 1024 * 1024;

export interface Form {
  /** Text fields, each given once. */
  fields: Record<string, string>;
  /** The uploaded `input` file, if any. */
  file?: Buffer;
  /** Every uploaded file by its field name (the endpoint's file fields). */
  files?: Record<string, Buffer>;
  /** The uploaded `background_image` file, if any (the endpoints that take one). */
  backgroundImage?: Buffer;
}

export interface FormOptions {
  /** Field names the endpoint accepts (text or, for the file fields, file). */
  allowed: readonly string[];
  /** The fields that may be files, each at most once (default: `input` and `background_image`, where the endpoint takes them). */
  files?: readonly string[];
  /** The largest file. */
  maxInputBytes: number;
  /** The largest text field (default MAX_FIELD_BYTES). */
  maxFieldBytes?: number;
  /** Time allowed to receive the whole body. */
  timeoutMs: number;
}

/** The fields of an endpoint that may be files: its own list, else those of FILE_FIELDS it takes. */
function fileFieldsOf(options: FormOptions): readonly string[] {
  return options.files ?? FILE_FIELDS.filter((name) => options.allowed.includes(name));
}

const formError = (message: string, options: { path?: string } = {}) =>
  new HttpError(400, 'invalid_multipart', message, { ...options, closeConnection: true });

function multerToHttp(err: unknown, maxInputBytes: number, maxFieldBytes: number, fileFields: readonly string[]): HttpError {
  if (err instanceof HttpError) return err;
  const e = err as { name?: string; code?: string; field?: string; message?: string };
  if (e?.name === 'MulterError') {
    switch (e.code) {
      case 'LIMIT_FILE_SIZE':
        return tooLarge(maxInputBytes);
      case 'LIMIT_FILE_COUNT':
        return new HttpError(400, 'invalid_field', `at most one file each of ${fileFields.join(', ')} may be uploaded`, { path: e.field ?? fileFields[0], closeConnection: true });
      case 'LIMIT_FIELD_COUNT':
      case 'LIMIT_PART_COUNT':
        return new HttpError(400, 'invalid_field', `the form has more than ${MAX_FIELDS} fields`, { closeConnection: true });
      case 'LIMIT_FIELD_VALUE':
        return new HttpError(400, 'invalid_field', `${e.field ?? 'a field'} is longer than ${maxFieldBytes} bytes`, { path: e.field, closeConnection: true });
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
  const fileFields = fileFieldsOf(options);
  if (!upload) {
    upload = multer({
      // A one-chunk upload is not copied (upload-storage.ts). @types/koa__multer types an engine's
      // answer as a whole File; multer merges the partial answer into the file it describes.
      storage: new UploadStorage() as unknown as multer.StorageEngine,
      limits: {
        fileSize: options.maxInputBytes,
        files: fileFields.length,
        fields: MAX_FIELDS,
        parts: MAX_FIELDS + fileFields.length,
        fieldSize: options.maxFieldBytes ?? MAX_FIELD_BYTES,
        fieldNameSize: 100,
        headerPairs: 20,
      },
      fileFilter: (_req, file, cb) => {
        if (fileFields.includes(file.fieldname)) cb(null, true);
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
  if (!ctx.is('multipart/form-data')) {
    throw formError('the body must be multipart/form-data (a form with an input field)');
  }
  const fileFields = fileFieldsOf(options);
  const maxFieldBytes = options.maxFieldBytes ?? MAX_FIELD_BYTES;
  // One bound for the whole body, files and text together: the upload limit and the form's allowance.
  const totalLimit = options.maxInputBytes + FORM_OVERHEAD_BYTES;
  const upload = uploadMiddleware(options);
  const parsed = await receiveBody<{ body: Record<string, unknown>; files: multer.File[] }>(ctx, { maxBodyBytes: totalLimit, maxInputBytes: options.maxInputBytes, timeoutMs: options.timeoutMs }, (done) => {
    // multer pipes the request into busboy synchronously.
    upload(ctx, async () => {}).then(
      () => done(undefined, { body: (ctx.request as { body?: Record<string, unknown> }).body ?? {}, files: (ctx.request.files as multer.File[] | undefined) ?? [] }),
      (err: unknown) => done(multerToHttp(err, options.maxInputBytes, maxFieldBytes, fileFields)),
    );
  });

  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed.body)) {
    if (!options.allowed.includes(name)) throw unknownField(name, options.allowed);
    if (Array.isArray(value)) throw new HttpError(400, 'invalid_field', `${name} is given more than once`, { path: name });
    if (typeof value !== 'string') throw new HttpError(400, 'invalid_field', `${name} must be a single text value`, { path: name });
    fields[name] = value;
  }
  const files: Record<string, Buffer> = {};
  for (const file of parsed.files) {
    const name = file.fieldname;
    if (files[name]) throw new HttpError(400, 'invalid_field', `${name} is given more than once`, { path: name });
    if (fields[name] !== undefined) throw new HttpError(400, 'invalid_field', `${name} is given both as a file and as ${name === 'input' || name === 'background_image' ? 'a URL' : 'text'}; send one`, { path: name });
    files[name] = file.buffer;
  }
  const form: Form = { fields, files };
  if (files.input) form.file = files.input;
  if (files.background_image) form.backgroundImage = files.background_image;
  return form;
}

function unknownField(name: string, allowed: readonly string[]): HttpError {
  return new HttpError(400, 'unknown_field', `unknown field "${name}" (this endpoint takes ${allowed.join(', ')})`, { path: name, closeConnection: true });
}
