// The remove.bg route's tests talk to matte through a front on loopback that checks every request
// and every answer against remove.bg's own OpenAPI document (removebg-document.ts) and records
// them. It is reached two ways: plain HTTP for the suite's own requests, and as https://api.remove.bg
// for remove.bg's official client, through a CONNECT proxy (the client's HTTPS_PROXY) whose tunnel
// to api.remove.bg:443 ends in TLS under a certificate from a CA made for the test
// (NODE_EXTRA_CA_CERTS). Any other tunnel or proxied request is refused: nothing leaves loopback.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import tls from 'node:tls';
import { requestErrors, responseErrors, type RequestSeen, type ResponseSeen } from './removebg-document.js';
import { form, TEST_KEY, type Fields } from './server.js';
import { makeTestCertificate } from './test-ca.js';

export const REMOVEBG_HOST = 'api.remove.bg';

export interface Exchange {
  request: RequestSeen;
  response: ResponseSeen;
  requestErrors: string[];
  responseErrors: string[];
}

export interface RemoveBgFront {
  /** The front over plain HTTP, for the suite's own requests. */
  url: string;
  /** The CONNECT proxy that gives a client api.remove.bg:443 (its HTTPS_PROXY). */
  proxyUrl: string;
  /** The test CA's certificate (NODE_EXTRA_CA_CERTS). */
  caPath: string;
  /** Every exchange, in the order the answers came. */
  exchanges: Exchange[];
  /** The tunnels asked of the proxy (host:port). */
  tunnels: string[];
  close(): Promise<void>;
}

/** What the document's schemas see of a body: JSON, a url-encoded form, or a multipart form (files as a marker). */
async function bodyOf(contentType: string | undefined, bytes: Buffer): Promise<Record<string, unknown> | undefined> {
  const type = contentType?.split(';')[0]!.trim().toLowerCase();
  try {
    if (type === 'application/json') return JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
    if (type === 'application/x-www-form-urlencoded') return Object.fromEntries(new URLSearchParams(bytes.toString('utf8')));
    if (type === 'multipart/form-data') {
      const data = await new Response(new Uint8Array(bytes), { headers: { 'content-type': contentType! } }).formData();
      return Object.fromEntries([...data].map(([name, value]) => [name, typeof value === 'string' ? value : '(binary file)']));
    }
  } catch {
    // an unreadable body: the document's checks report it as missing
  }
  return undefined;
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

/** Starts the front before `target` (matte's base URL) and the CONNECT proxy beside it. */
export async function startRemoveBgFront(target: string): Promise<RemoveBgFront> {
  const certificate = makeTestCertificate(REMOVEBG_HOST);
  const exchanges: Exchange[] = [];
  const tunnels: string[] = [];

  const front = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const path = new URL(req.url ?? '/', 'http://front').pathname;
    const { connection: _connection, 'keep-alive': _keepAlive, ...sent } = req.headers;
    const headers = { ...sent, 'x-request-id': req.headers['x-request-id'] ?? randomUUID(), host: new URL(target).host };
    const request: RequestSeen = { method: req.method ?? 'GET', path, headers, body: await bodyOf(req.headers['content-type'], body) };
    const response = await new Promise<ResponseSeen>((resolve, reject) => {
      // A connection an exchange (no keep-alive): matte's open connections are the clients' own.
      const forward = http.request(target + (req.url ?? '/'), { method: req.method, headers, agent: false }, async (answer) => {
        const parts: Buffer[] = [];
        for await (const part of answer) parts.push(part as Buffer);
        resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body: Buffer.concat(parts) });
      });
      forward.on('error', reject);
      forward.end(body);
    }).catch((err: Error) => ({ status: 599, headers: {}, body: Buffer.from(`the front could not reach matte: ${err.message}`) }));
    exchanges.push({ request, response, requestErrors: requestErrors(request), responseErrors: responseErrors(request, response) });
    const out: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined && !['transfer-encoding', 'connection', 'keep-alive', 'content-length'].includes(name)) out[name] = value;
    }
    res.writeHead(response.status, { ...out, 'content-length': response.body.length });
    res.end(response.body);
  });

  const secureContext = tls.createSecureContext({ key: certificate.key, cert: certificate.cert });
  const proxy = http.createServer((_req, res) => {
    res.writeHead(403).end('this proxy only tunnels to api.remove.bg:443');
  });
  proxy.on('connect', (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
    tunnels.push(req.url ?? '');
    if (req.url !== `${REMOVEBG_HOST}:443`) {
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) socket.unshift(head);
    // The tunnel's TLS ends here; the front serves what is inside as one of its own connections.
    front.emit('connection', new tls.TLSSocket(socket, { isServer: true, secureContext }));
  });

  const url = await listen(front);
  const proxyUrl = await listen(proxy);
  return {
    url,
    proxyUrl,
    caPath: certificate.caPath,
    exchanges,
    tunnels,
    async close() {
      front.closeAllConnections();
      proxy.closeAllConnections();
      await Promise.all([new Promise((r) => front.close(r)), new Promise((r) => proxy.close(r))]);
      certificate.remove();
    },
  };
}

export interface Sent {
  status: number;
  headers: Headers;
  body: Buffer;
  json(): any;
  exchange: Exchange;
}

export type RemoveBgBody = { multipart: Fields } | { json: Record<string, unknown> } | { urlencoded: Record<string, string> };

/** Sends a request through the front (the test key unless `key`; null: none) and returns its answer and exchange. */
export async function send(front: RemoveBgFront, method: 'GET' | 'POST', path: string, body?: RemoveBgBody, options: { key?: string | null; accept?: string } = {}): Promise<Sent> {
  const id = randomUUID();
  const headers: Record<string, string> = { 'X-Request-Id': id };
  const key = options.key === undefined ? TEST_KEY : options.key;
  if (key !== null) headers['X-Api-Key'] = key;
  if (options.accept) headers.Accept = options.accept;
  let payload: BodyInit | undefined;
  if (body && 'multipart' in body) payload = form(body.multipart);
  else if (body && 'json' in body) {
    payload = JSON.stringify(body.json);
    headers['Content-Type'] = 'application/json';
  } else if (body && 'urlencoded' in body) payload = new URLSearchParams(body.urlencoded);
  const res = await fetch(front.url + path, { method, headers, body: payload });
  const bytes = Buffer.from(await res.arrayBuffer());
  const exchange = front.exchanges.find((e) => e.request.headers['x-request-id'] === id);
  if (!exchange) throw new Error(`no exchange recorded for ${method} ${path}`);
  return { status: res.status, headers: res.headers, body: bytes, json: () => JSON.parse(bytes.toString('utf8')), exchange };
}
