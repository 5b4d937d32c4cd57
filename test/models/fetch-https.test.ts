// run-tests: parallel
// Fetching over HTTP(S) from a loopback server standing in for the publisher or a mirror
// (MATTE_MODELS_MIRROR): u2netp's bytes under rembg's file name through a redirect chain; a
// truncated file and a wrong checksum (nothing left behind); a transfer cut in the middle that
// resumes with a Range request, in the same run and in the next; a proxy (HTTP_PROXY, NO_PROXY);
// rembg's cache (U2NET_HOME); and the one-line errors of the `matte models fetch` command.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { loadModel, modelRegistry, type ModelEntry } from '../../lib/index.js';
import { modelPath, modelsDir } from '../../lib/models.js';
import { fetchModel } from '../../models/fetch.js';
import { lines, runCli } from '../helpers/cli.js';
import { modelError } from '../helpers/failure.js';
import { scratchDir } from '../helpers/scratch.js';

let dir = '';
scratchDir(test, 'matte-fetch-https-', (path) => (dir = path));

const RELEASE = '/danielgatis/rembg/releases/download/v0.0.0';
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** No proxy and no mirror from the machine's environment, no rembg cache. */
const CLEAN = { http_proxy: '', HTTP_PROXY: '', https_proxy: '', HTTPS_PROXY: '', no_proxy: '', NO_PROXY: '', MATTE_MODELS_MIRROR: '' };

/** Asserts that `promise` rejects with a message matching `pattern`. */
async function rejects(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  const error = await promise.then(() => undefined, (err: unknown) => err as Error);
  assert.ok(error, `expected a rejection matching ${pattern}`);
  assert.match(error!.message, pattern);
}

let u2netp = Buffer.alloc(0);
let emptyHome = '';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
interface Loopback { url: string; server: Server; requests: Array<{ path: string; range?: string }> }

/** A loopback HTTP server; every request is recorded. */
async function serve(handler: Handler): Promise<Loopback> {
  const requests: Loopback['requests'] = [];
  const server = createServer((req, res) => {
    requests.push({ path: req.url ?? '', range: req.headers.range });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, requests };
}

const close = (s: Loopback) => new Promise<void>((resolve) => { s.server.closeAllConnections(); s.server.close(() => resolve()); });

/** Serves `bytes` with Range support. */
function file(bytes: Buffer): Handler {
  return (req, res) => {
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = range ? Number(range[1]) : 0;
    if (start >= bytes.length && range) {
      res.writeHead(416).end();
      return;
    }
    res.writeHead(range ? 206 : 200, { 'content-length': bytes.length - start, ...(range ? { 'content-range': `bytes ${start}-${bytes.length - 1}/${bytes.length}` } : {}) });
    res.end(bytes.subarray(start));
  };
}

/** A registry-style entry for a file the loopback server publishes (pinned by md5 alone, as rembg pins). */
function published(url: string, bytes: Buffer, extra: Partial<ModelEntry> = {}): ModelEntry {
  const u2net = { width: 320, height: 320, divide: 'max' as const, mean: [0.485, 0.456, 0.406] as [number, number, number], std: [0.229, 0.224, 0.225] as [number, number, number] };
  return { license: 'Apache-2.0', source: { url, md5: md5(bytes) }, size: bytes.length, input: u2net, output: { index: 0, postprocess: 'minmax' }, ...extra };
}

test.before(async () => {
  const path = modelPath('u2netp', modelsDir());
  if (existsSync(path)) u2netp = await readFile(path);
  emptyHome = join(dir, 'no-rembg-cache');
  await mkdir(emptyHome);
});

test('rembg pins u2netp by the md5 of our npm-sourced bytes: one file, two publishers', async () => {
  if (!u2netp.length) return console.log('skip: u2netp is not fetched (sh scripts/setup.sh fetches it)');
  const entry = (await modelRegistry()).models.u2netp!;
  assert.is(md5(u2netp), '8e83ca70e441ab06c318d82300c84806');
  assert.is(entry.source.md5, md5(u2netp));
  assert.is(entry.size, u2netp.length);
  assert.is(entry.source.url, `https://github.com${RELEASE}/u2netp.onnx`);
});

test('`matte models fetch u2netp` from a mirror, through a redirect chain, as a user runs it', async () => {
  if (!u2netp.length) return console.log('skip: u2netp is not fetched');
  const mirror = await serve((req, res) => {
    // GitHub's release assets redirect to their storage: three hops here, each kind.
    if (req.url === `${RELEASE}/u2netp.onnx`) res.writeHead(302, { location: '/hop/1' }).end();
    else if (req.url === '/hop/1') res.writeHead(301, { location: '/hop/2' }).end();
    else if (req.url === '/hop/2') res.writeHead(307, { location: '/storage/u2netp.onnx' }).end();
    else if (req.url === '/storage/u2netp.onnx') file(u2netp)(req, res);
    else res.writeHead(404).end();
  });
  try {
    const target = join(dir, 'mirror');
    const run = await runCli(['models', 'fetch', 'u2netp'], { env: { ...CLEAN, MATTE_MODELS_DIR: target, MATTE_MODELS_MIRROR: mirror.url, U2NET_HOME: emptyHome } });
    assert.is(run.code, 0, run.stderr);
    assert.equal((await readFile(join(target, 'u2netp.onnx'))).equals(u2netp), true);
    assert.equal(mirror.requests.map((r) => r.path), [`${RELEASE}/u2netp.onnx`, '/hop/1', '/hop/2', '/storage/u2netp.onnx']);
    assert.equal(await readdir(target), ['u2netp.onnx'], 'no partial or temporary file is left');
    // Not a terminal: the progress is plain lines, the last at 100%.
    assert.match(run.stderr, /^models: u2netp: 100% \(4\.6 MB of 4\.6 MB\)$/m);
    // A second run finds it in place: no request.
    const again = await runCli(['models', 'fetch', 'u2netp'], { env: { ...CLEAN, MATTE_MODELS_DIR: target, MATTE_MODELS_MIRROR: mirror.url, U2NET_HOME: emptyHome } });
    assert.is(again.code, 0);
    assert.match(again.stdout, /already in/);
    assert.is(mirror.requests.length, 4);
  } finally {
    await close(mirror);
  }
});

test('a file pinned by md5 is verified, its sha256 recorded beside it, and later loads check that', async () => {
  if (!u2netp.length) return console.log('skip: u2netp is not fetched');
  const server = await serve(file(u2netp));
  try {
    const target = join(dir, 'recorded');
    const entry = published(`${server.url}/u2net.onnx`, u2netp);
    const path = await fetchModel('pinned', { entry, dir: target, quiet: true, env: { ...CLEAN, U2NET_HOME: emptyHome } });
    assert.is(await readFile(`${path}.sha256`, 'utf8'), `${sha256(u2netp)}  pinned.onnx\n`);
    const loaded = await loadModel('pinned', { entry, dir: target });
    assert.is(loaded.path, path);
    // A file changed after it was verified is refused, naming the recorded hash.
    const changed = Buffer.from(u2netp);
    changed.writeUInt8(changed.readUInt8(changed.length - 1) ^ 1, changed.length - 1);
    await writeFile(path, changed);
    await modelError(loadModel('pinned-changed', { entry, path }), /has sha256 [0-9a-f]{64}, the sha256 recorded when it was verified .* is [0-9a-f]{64}/);
  } finally {
    await close(server);
  }
});

test('a truncated file and a wrong checksum: one clear error, nothing left behind', async () => {
  if (!u2netp.length) return console.log('skip: u2netp is not fetched');
  const half = u2netp.subarray(0, u2netp.length >> 1);
  const server = await serve((req, res) => (req.url === '/short.onnx' ? file(half) : file(u2netp))(req, res));
  try {
    const target = join(dir, 'refused');
    const env = { ...CLEAN, U2NET_HOME: emptyHome };
    // The size the publisher gives is checked first; without one, the md5 catches it.
    await rejects(fetchModel('short', { entry: published(`${server.url}/short.onnx`, u2netp), dir: target, quiet: true, env }), /short: the file has \d+ bytes, the registry expects 4574861; nothing is kept/);
    await rejects(fetchModel('short', { entry: published(`${server.url}/short.onnx`, u2netp, { size: null }), dir: target, quiet: true, env }), /short: checksum mismatch: md5 [0-9a-f]{32}, the publisher's is 8e83ca70e441ab06c318d82300c84806; nothing is kept/);
    const wrong = published(`${server.url}/u2net.onnx`, u2netp);
    wrong.source.md5 = '0'.repeat(32);
    await rejects(fetchModel('wrong', { entry: wrong, dir: target, quiet: true, env }), /wrong: checksum mismatch: md5 8e83ca70e441ab06c318d82300c84806, the publisher's is 0{32}; nothing is kept/);
    assert.equal(await readdir(target), [], 'no model, no partial file, no recorded hash');
  } finally {
    await close(server);
  }
});

test('a transfer cut in the middle resumes with a Range request, in the same run and in the next', async () => {
  if (!u2netp.length) return console.log('skip: u2netp is not fetched');
  const cut = 1_000_000;
  let cuts = 1;
  const server = await serve((req, res) => {
    if (!req.headers.range && cuts-- > 0) {
      // The full length announced, a part sent, then the connection dropped.
      res.writeHead(200, { 'content-length': u2netp.length });
      res.write(u2netp.subarray(0, cut), () => res.destroy());
      return;
    }
    file(u2netp)(req, res);
  });
  try {
    const target = join(dir, 'resumed');
    const env = { ...CLEAN, U2NET_HOME: emptyHome };
    const path = await fetchModel('resumed', { entry: published(`${server.url}/u2net.onnx`, u2netp), dir: target, quiet: true, env });
    assert.ok((await readFile(path)).equals(u2netp));
    assert.is(server.requests.length, 2);
    assert.is(server.requests[0]!.range, undefined);
    assert.match(server.requests[1]!.range ?? '', /^bytes=\d+-$/);
    assert.ok(Number(/\d+/.exec(server.requests[1]!.range!)![0]) > 0, 'the second request asks only for the rest');

    // A partial file left by an earlier run (interrupted, Ctrl-C): the next run asks for the rest.
    const later = join(dir, 'later');
    await mkdir(later);
    await writeFile(join(later, 'later.onnx.part'), u2netp.subarray(0, 12345));
    await fetchModel('later', { entry: published(`${server.url}/u2net.onnx`, u2netp), dir: later, quiet: true, env });
    assert.is(server.requests.at(-1)!.range, 'bytes=12345-');
    assert.ok((await readFile(join(later, 'later.onnx'))).equals(u2netp));
    assert.equal((await readdir(later)).sort(), ['later.onnx', 'later.onnx.sha256']);
  } finally {
    await close(server);
  }
});

/** A loopback forward proxy: CONNECT tunnels and absolute-form requests, each recorded. */
async function proxy(): Promise<{ url: string; server: Server; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const upstream = httpRequest(req.url!, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req, socket, head) => {
    seen.push(`CONNECT ${req.url}`);
    const [host, port] = req.url!.split(':');
    const tunnel = connect(Number(port), host!, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      tunnel.write(head);
      tunnel.pipe(socket);
      socket.pipe(tunnel);
    });
    tunnel.on('error', () => socket.destroy());
    socket.on('error', () => tunnel.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, seen };
}

test('HTTP_PROXY is used; NO_PROXY bypasses it', async () => {
  if (!u2netp.length) return console.log('skip: u2netp is not fetched');
  const server = await serve(file(u2netp));
  const forward = await proxy();
  try {
    const entry = published(`${server.url}/u2net.onnx`, u2netp);
    await fetchModel('proxied', { entry, dir: join(dir, 'proxied'), quiet: true, env: { ...CLEAN, U2NET_HOME: emptyHome, HTTP_PROXY: forward.url } });
    assert.is(forward.seen.length, 1, 'the request went through the proxy');
    assert.match(forward.seen[0]!, new RegExp(`(CONNECT 127\\.0\\.0\\.1:${new URL(server.url).port}|GET ${server.url}/u2net\\.onnx)`));
    await fetchModel('direct', { entry, dir: join(dir, 'direct'), quiet: true, env: { ...CLEAN, U2NET_HOME: emptyHome, HTTP_PROXY: forward.url, NO_PROXY: '127.0.0.1' } });
    assert.is(forward.seen.length, 1, 'NO_PROXY: not through the proxy');
    assert.is(server.requests.length, 2);
  } finally {
    forward.server.closeAllConnections();
    forward.server.close();
    await close(server);
  }
});

test("rembg's cache (U2NET_HOME): the verified file is copied, no download; a bad one is not used", async () => {
  if (!u2netp.length) return console.log('skip: u2netp is not fetched');
  const rembgHome = join(dir, 'u2net-home');
  await mkdir(rembgHome);
  await writeFile(join(rembgHome, 'u2netp.onnx'), u2netp);
  const target = join(dir, 'from-rembg');
  // The mirror is a closed port: any download would fail.
  const run = await runCli(['models', 'fetch', 'u2netp'], { env: { ...CLEAN, MATTE_MODELS_DIR: target, U2NET_HOME: rembgHome, MATTE_MODELS_MIRROR: 'http://127.0.0.1:9' } });
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stdout, /copied from rembg's cache .*u2netp\.onnx \(verified, no download\)/);
  assert.ok((await readFile(join(target, 'u2netp.onnx'))).equals(u2netp));

  await writeFile(join(rembgHome, 'u2netp.onnx'), u2netp.subarray(0, 1000));
  const bad = await runCli(['models', 'fetch', 'u2netp'], { env: { ...CLEAN, MATTE_MODELS_DIR: join(dir, 'bad-rembg'), U2NET_HOME: rembgHome, MATTE_MODELS_MIRROR: 'http://127.0.0.1:9' } });
  assert.is(bad.code, 1);
  assert.match(bad.stdout, /in rembg's cache .* was not used: u2netp: the file has 1000 bytes/);
  assert.not.ok(existsSync(join(dir, 'bad-rembg', 'u2netp.onnx')));
});

test('no network: one line naming the URL and MATTE_MODELS_MIRROR, exit status 1', async () => {
  const target = join(dir, 'offline');
  const run = await runCli(['models', 'fetch', 'u2netp'], { env: { ...CLEAN, MATTE_MODELS_DIR: target, U2NET_HOME: emptyHome, MATTE_MODELS_MIRROR: 'http://127.0.0.1:9/models' } });
  assert.is(run.code, 1);
  const errors = lines(run.stderr);
  assert.is(errors.length, 1, run.stderr);
  assert.match(errors[0]!, /^matte: u2netp: cannot download http:\/\/127\.0\.0\.1:9\/models\/danielgatis\/rembg\/releases\/download\/v0\.0\.0\/u2netp\.onnx: .*ECONNREFUSED.*check MATTE_MODELS_MIRROR/);
  // Without a mirror the hint says how to set one (a publisher URL on loopback stands in for GitHub).
  const entry = published('http://127.0.0.1:9/u2net.onnx', Buffer.from('x'));
  await rejects(fetchModel('offline', { entry, dir: target, quiet: true, env: { ...CLEAN, U2NET_HOME: emptyHome } }), /offline: cannot download http:\/\/127\.0\.0\.1:9\/u2net\.onnx: .*set MATTE_MODELS_MIRROR/);
});

test('a restricted licence is never fetched implicitly, and `matte models list` says so', async () => {
  const entry = published('http://127.0.0.1:9/rmbg.onnx', Buffer.from('x'), { license: 'CC-BY-NC-4.0' });
  await rejects(fetchModel('rmbg', { entry, named: false, quiet: true, env: { ...CLEAN } }), /rmbg is CC-BY-NC-4\.0 \(non-commercial use only\): it is fetched only when named/);
  const list = await runCli(['models', 'list'], { env: { ...CLEAN, MATTE_MODELS_DIR: join(dir, 'list') } });
  assert.is(list.code, 0, list.stderr);
  assert.match(list.stdout, /bria-rmbg .*CC-BY-NC-4\.0.*non-commercial use only/);
  assert.match(list.stdout, /isnet .*AGPL-3\.0.*AGPL/);
  assert.match(list.stdout, /birefnet-general .*MIT .*huge/);
});

test.run();
