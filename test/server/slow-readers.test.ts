// run-tests: parallel
// Sockets and bytes with deadlines, through the real server: a redirect hop whose body never ends
// is closed once the image is fetched; URL inputs on another port than 80 and 443 are refused
// before any address is looked at, and a failed fetch tells the client no errno or status; a
// client that never reads its raw result holds its admission until it is cut after
// MATTE_IDLE_TIMEOUT_SECONDS, and so does a stalled download of a stored result.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { loadConfig, ConfigError, urlPortAllowed } from '../../server/config.js';
import { gradient, makePng } from '../helpers/images.js';
import { form, post, sleep, startTestServer, TEST_KEY, type Fields, type TestServer } from '../helpers/server.js';

const png = gradient(40, 30);

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(20);
  }
}

// ---- the URL fetcher ------------------------------------------------------------------------------

/** An origin whose /forever answers 302 with a body that never ends; records each socket's state. */
const sockets: Array<{ path: string; socket: Socket; closed: boolean }> = [];
const origin = http.createServer((req, res) => {
  const entry = { path: req.url ?? '', socket: req.socket, closed: false };
  sockets.push(entry);
  req.socket.once('close', () => (entry.closed = true));
  if (req.url === '/img.png') {
    res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': png.length });
    res.end(png);
  } else if (req.url === '/forever') {
    res.writeHead(302, { Location: '/img.png', 'Content-Type': 'text/plain' });
    const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write('x'.repeat(1024))), 20);
    res.once('close', () => clearInterval(drip));
  } else if (req.url === '/elsewhere') {
    res.writeHead(302, { Location: 'http://127.0.0.1:1/img.png' });
    res.end();
  } else if (req.url === '/teapot') {
    res.writeHead(418, { 'Content-Type': 'text/plain' });
    res.end('no');
  } else {
    res.writeHead(404);
    res.end();
  }
});
origin.keepAliveTimeout = 60_000;
await new Promise<void>((r) => origin.listen(0, '127.0.0.1', () => r()));
const originBase = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;

const open = await startTestServer({ MATTE_ALLOW_PRIVATE_URLS: '1', MATTE_URL_PORTS: '*', MATTE_URL_FETCH_TIMEOUT_SECONDS: '5' });
// The default ports; no DNS answers (nothing may leave loopback).
const defaults = await startTestServer({ MATTE_DNS_SERVERS: '127.0.0.1:9', MATTE_URL_FETCH_TIMEOUT_SECONDS: '1' });

test('a redirect hop whose body never ends: followed, and its socket closed once the image is in', async () => {
  sockets.length = 0;
  const r = await post(open.url, '/images/edit', { input: `${originBase}/forever`, operations: '[{"flip":"h"}]', output: 'raw' });
  assert.is(r.status, 200, r.body.toString());
  const hop = sockets.find((s) => s.path === '/forever');
  assert.ok(hop, 'the redirect was asked for');
  await until(() => hop!.closed, 'the redirect hop socket is closed', 5000);
  await until(() => sockets.every((s) => s.closed), 'every origin socket is closed', 5000);
});

test('a URL on port 8080 (not 80 or 443): 400 input_url_forbidden before any address is looked at', async () => {
  for (const input of ['http://127.0.0.1:8080/a.png', 'http://never-resolved.example:8080/a.png', 'https://[::1]:22/a.png']) {
    const r = await post(defaults.url, '/images/edit', { input, operations: '[{"flip":"h"}]' });
    assert.is(r.status, 400, `${input}: ${r.body}`);
    assert.is(r.json().error.code, 'input_url_forbidden');
    assert.is(r.json().error.path, 'input');
    assert.not.match(r.json().error.message, /8080|22|loopback|127/);
  }
});

test('a redirect to a port not allowed is refused the same way (400, not a connection attempt)', async () => {
  const originPort = (origin.address() as AddressInfo).port;
  const guarded = await startTestServer({ MATTE_URL_PORTS: `80,443,${originPort}` }, { isAllowedAddress: (a) => a === '127.0.0.1' });
  try {
    assert.is((await post(guarded.url, '/images/edit', { input: `${originBase}/img.png`, operations: '[{"flip":"h"}]', output: 'raw' })).status, 200);
    const r = await post(guarded.url, '/images/edit', { input: `${originBase}/elsewhere`, operations: '[{"flip":"h"}]' });
    assert.is(r.status, 400, r.body.toString());
    assert.is(r.json().error.code, 'input_url_forbidden');
  } finally {
    await guarded.close();
  }
});

test('port scan through matte: a closed port and an upstream status get the same generic 422', async () => {
  const closed = await post(open.url, '/images/edit', { input: 'http://127.0.0.1:1/a.png', operations: '[{"flip":"h"}]' });
  const teapot = await post(open.url, '/images/edit', { input: `${originBase}/teapot`, operations: '[{"flip":"h"}]' });
  for (const r of [closed, teapot]) {
    assert.is(r.status, 422);
    assert.is(r.json().error.code, 'input_url_fetch_failed');
    assert.not.match(r.json().error.message, /ECONNREFUSED|418|status/);
  }
  assert.is(closed.json().error.message, teapot.json().error.message);
});

test('MATTE_URL_PORTS: ports, ranges and *; anything else stops the start naming the variable', () => {
  assert.equal(loadConfig({}).urlPorts, [[80, 80], [443, 443]]);
  const ports = loadConfig({ MATTE_URL_PORTS: '80, 443,8000-8999' }).urlPorts;
  for (const [port, allowed] of [[80, true], [443, true], [8000, true], [8999, true], [9000, false], [22, false]] as const) assert.is(urlPortAllowed(ports, port), allowed, String(port));
  assert.ok(urlPortAllowed(loadConfig({ MATTE_URL_PORTS: '*' }).urlPorts, 6379));
  for (const bad of ['http', '0', '70000', '9000-8000', '80,,x', '1-2-3']) {
    try {
      loadConfig({ MATTE_URL_PORTS: bad });
      assert.unreachable(bad);
    } catch (err) {
      assert.instance(err, ConfigError, bad);
      assert.match((err as Error).message, /MATTE_URL_PORTS/);
    }
  }
});

// ---- slow readers ----------------------------------------------------------------------------------

/** A 1800x1800 PNG of noise: about 9.7 MB that no encoder shrinks, more than loopback buffers hold. */
function noisePng(side: number): Buffer {
  let state = 0x9e3779b9;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state & 0xff;
  };
  return makePng(side, side, () => [next(), next(), next()]);
}
const noise = noisePng(1800);

let tight: TestServer;
/** The server's side of each connection, by the client's port: a paused client never sees a reset. */
const serverSide = new Map<number, Socket>();
test.before(async () => {
  tight = await startTestServer({ MATTE_IDLE_TIMEOUT_SECONDS: '1', MATTE_CONCURRENCY: '1', MATTE_QUEUE_LIMIT: '0', MATTE_MAX_INPUT_BYTES: String(16 * 1024 * 1024) });
  tight.running.server.on('connection', (socket: Socket) => serverSide.set(socket.remotePort!, socket));
});

/** Whether the server closed its side of the client socket's connection. */
function cutByServer(client: Socket): () => boolean {
  return () => serverSide.get(client.localPort!)?.destroyed === true;
}

/** Sends a POST on a raw socket and stops reading once the response headers are in. */
async function stalledPost(port: number, path: string, fields: Fields): Promise<{ socket: Socket; head: string; closed: () => boolean }> {
  const request = new Request('http://x/', { method: 'POST', body: form(fields) });
  const body = Buffer.from(await request.arrayBuffer());
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise((r) => socket.once('connect', r));
  socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${TEST_KEY}\r\nContent-Type: ${request.headers.get('content-type')}\r\nContent-Length: ${body.length}\r\n\r\n`);
  socket.write(body);
  let head = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      head += d.toString('latin1');
      if (head.includes('\r\n\r\n')) {
        socket.off('data', onData);
        socket.pause(); // and never read again
        resolve();
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`closed before the response: ${head}`)));
  });
  return { socket, head, closed: cutByServer(socket) };
}

test('a client that never reads its raw result: the result keeps its admission (503 meanwhile), cut after MATTE_IDLE_TIMEOUT_SECONDS', async () => {
  const stalled = await stalledPost(tight.port, '/images/edit', { input: noise, operations: '[{"flip":"h"}]', output: 'raw' });
  assert.match(stalled.head, /^HTTP\/1\.1 200/);
  const contentLength = Number(/content-length: (\d+)/i.exec(stalled.head)?.[1]);
  assert.ok(contentLength > 8_000_000, `a result larger than the socket buffers (${contentLength})`);
  // The bytes not yet sent hold the only admission slot.
  const refused = await post(tight.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]', output: 'raw' });
  assert.is(refused.status, 503, refused.body.toString());
  assert.is(refused.json().error.code, 'overloaded');
  await until(stalled.closed, 'the server cut the stalled response');
  stalled.socket.destroy();
  const served = await post(tight.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]', output: 'raw' });
  assert.is(served.status, 200, 'the slot came back once the stalled response was cut');
});

test('a stalled download of a stored result is cut after MATTE_IDLE_TIMEOUT_SECONDS; a slow steady reader is not', async () => {
  const stored = await post(tight.url, '/images/edit', { input: noise, operations: '[{"flip":"v"}]' });
  assert.is(stored.status, 200, stored.body.toString());
  const path = new URL(stored.json().url).pathname;
  const socket = net.connect(tight.port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise((r) => socket.once('connect', r));
  const closed = cutByServer(socket);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  await new Promise<void>((resolve) =>
    socket.once('data', () => {
      socket.pause(); // and never read again
      resolve();
    }),
  );
  await until(closed, 'the stalled download is cut');
  socket.destroy();

  // A reader that stops for 400 ms at a time (under the 1 s idle deadline) gets every byte.
  const slow = net.connect(tight.port, '127.0.0.1');
  slow.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  const chunks: Buffer[] = [];
  let ended = false;
  slow.on('data', (d: Buffer) => chunks.push(d));
  slow.on('end', () => (ended = true));
  const started = Date.now();
  while (!ended && Date.now() - started < 60_000) {
    slow.pause();
    await sleep(400);
    slow.resume();
    await sleep(20);
  }
  const text = Buffer.concat(chunks);
  const head = text.subarray(0, text.indexOf('\r\n\r\n')).toString('latin1');
  const length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
  assert.ok(ended, 'the slow reader got to the end');
  assert.is(text.length - head.length - 4, length, 'every byte arrived');
  slow.destroy();
});

test.after(async () => {
  await open.close();
  await defaults.close();
  await tight.close();
  origin.closeAllConnections();
  origin.close();
});

test.run();
