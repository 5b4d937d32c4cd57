// An image origin on loopback for the tests of GET image URLs (the foreign dialects, signed URLs,
// the result cache): serves the images it is given by path, with the validators and Cache-Control
// a test sets, answers conditional requests with 304, and counts what it was asked: every request,
// and the bodies it sent (so a test can tell "no fetch", "a revalidation" and "a whole fetch" apart).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OriginFile {
  body: Buffer;
  type?: string;
  etag?: string;
  lastModified?: string;
  cacheControl?: string;
}

export interface Origin {
  /** http://127.0.0.1:port */
  url: string;
  files: Map<string, OriginFile>;
  /** Requests received, bodies sent (200s), 304s sent. */
  requests: number;
  bodies: number;
  notModified: number;
  /** The path (with query) of every request, in order. */
  paths: string[];
  close(): Promise<void>;
}

export async function startOrigin(files: Record<string, OriginFile> = {}): Promise<Origin> {
  const origin: Origin = {
    url: '',
    files: new Map(Object.entries(files)),
    requests: 0,
    bodies: 0,
    notModified: 0,
    paths: [],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((req, res) => {
    origin.requests++;
    origin.paths.push(req.url ?? '');
    const file = origin.files.get((req.url ?? '').split('?')[0]!);
    if (!file) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    const headers: Record<string, string> = { 'Content-Type': file.type ?? 'image/png' };
    if (file.etag) headers.ETag = file.etag;
    if (file.lastModified) headers['Last-Modified'] = file.lastModified;
    if (file.cacheControl) headers['Cache-Control'] = file.cacheControl;
    const inm = req.headers['if-none-match'];
    const ims = req.headers['if-modified-since'];
    if ((file.etag && inm === file.etag) || (!inm && file.lastModified && ims === file.lastModified)) {
      origin.notModified++;
      res.writeHead(304, headers).end();
      return;
    }
    origin.bodies++;
    res.writeHead(200, { ...headers, 'Content-Length': String(file.body.length) }).end(file.body);
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return origin;
}
