// The part of multer 2's API the server uses (multer ships no types; @types/koa__multer covers
// only the Koa wrapper, whose promise form cannot be raced against the server's own limits).
declare module 'multer' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  namespace multer {
    interface File {
      fieldname: string;
      originalname: string;
      encoding: string;
      mimetype: string;
      size: number;
      buffer: Buffer;
    }
    interface Limits {
      fieldNameSize?: number;
      fieldSize?: number;
      fields?: number;
      fileSize?: number;
      files?: number;
      parts?: number;
      headerPairs?: number;
    }
    interface Options {
      storage?: unknown;
      limits?: Limits;
      fileFilter?: (req: IncomingMessage, file: File, callback: (error: Error | null, accept?: boolean) => void) => void;
    }
    type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;
    interface Instance {
      any(): Middleware;
      none(): Middleware;
    }
  }
  function multer(options?: multer.Options): multer.Instance;
  namespace multer {
    function memoryStorage(): unknown;
  }
  export = multer;
}
