// Where multer puts an uploaded file: in memory, like multer.memoryStorage(), but without copying
// an upload that arrived in one piece. busboy hands over the file's bytes as views of the request's
// body chunks, and Node's HTTP parser gives every body chunk a buffer of its own (a copy, never
// reused for later bytes of the socket), so a file that fits in one chunk is kept as that view;
// only a file in several chunks is joined into one buffer. multer.memoryStorage() always joined
// them (Buffer.concat): a second buffer as large as the upload on the main thread for every
// request, whose external memory makes V8 run full mark-compacts.
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';

interface IncomingFile {
  stream: Readable;
}

type Done = (error: Error | null, info?: { buffer: Buffer; size: number }) => void;

/** The bytes of `chunks` as one buffer: the chunk itself when there is only one. */
export function joinChunks(chunks: Buffer[], size: number): Buffer {
  if (chunks.length === 1) return chunks[0]!;
  return Buffer.concat(chunks, size);
}

/** A multer storage engine (its `_handleFile` / `_removeFile` interface) keeping files in memory. */
export class UploadStorage {
  _handleFile(_req: IncomingMessage, file: IncomingFile, done: Done): void {
    const chunks: Buffer[] = [];
    let size = 0;
    file.stream.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
    });
    file.stream.on('end', () => {
      const buffer = joinChunks(chunks, size);
      done(null, { buffer, size });
    });
  }

  _removeFile(_req: IncomingMessage, file: { buffer?: Buffer }, done: (error: Error | null) => void): void {
    delete file.buffer;
    done(null);
  }
}
