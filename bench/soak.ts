// The soak (issue 9): the real server under a bounded, mixed load for N minutes, on loopback only,
// watched from outside through /proc. It stops by itself.
//
//   npm run soak                              # 5 minutes
//   npm run soak -- --minutes 1 --rate 6      # requests started per second (default 6)
//
// Starts `node dist/server/main.js` (its own results directory and TMPDIR, MATTE_ALLOW_PRIVATE_URLS=1
// so it may fetch from the loopback image host this script also starts) and sends, at a bounded
// rate with at most --inflight requests at once (below the server's concurrency + queue, so a 503
// is a failure, not back-pressure): edits (upload, url and raw outputs), remove-background, URL
// inputs, uploads aborted mid-body, slow clients dripping their body, oversize uploads and URLs,
// bad inputs (garbage bytes, broken operations, unreachable URLs), remove.bg's API with a base64
// image, and hostile remove.bg bodies as large as a body may be. Wrong keys (one stale key in
// a loop, and random ones) come from another loopback address (127.0.0.2) and through a trusted
// proxy (127.0.0.3, X-Forwarded-For), beside right keys from the same addresses, under a throttle
// low enough to engage: the run tests the throttle instead of tripping over it. Every 2 s it
// samples the server's RSS, open descriptors (/proc/PID/fd), the results directory (files,
// bytes) and its temporary files, and the temporary files in the server's TMPDIR.
//
// Exits non-zero when: any 5xx; RSS not flat after warm-up (the median of the last quarter's
// samples above the second quarter's by more than 10% and 24 MB); descriptors or temporary files
// left once the load stopped (idle counts after the run above those after warm-up, in an idle
// pause taken then); a request of a kind answered with a status that kind never gets (a right key
// answered 429 above all); wrong keys never answered 429 (the throttle did not engage).
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { convert, gradient, makeGif, disc } from '../test/helpers/images.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '5' },
    rate: { type: 'string', default: '6' },
    inflight: { type: 'string', default: '6' },
    concurrency: { type: 'string', default: '2' },
    'warmup-seconds': { type: 'string', default: '' },
    // Only these kinds of request (comma-separated names from KINDS), to chase one finding.
    only: { type: 'string', default: '' },
  },
});
const durationMs = Number(args.minutes) * 60_000;
const rate = Number(args.rate);
const maxInflight = Number(args.inflight);
const serverConcurrency = Number(args.concurrency);
const warmupMs = args['warmup-seconds'] ? Number(args['warmup-seconds']) * 1000 : Math.min(60_000, durationMs / 5);
const maxRequests = Math.ceil((rate * durationMs) / 1000);
const KEY = 'soak-key-0123456789abcdef';
// The guesser's own address, and the proxy the server trusts (MATTE_TRUSTED_PROXIES), on loopback.
const GUESSER = '127.0.0.2';
const PROXY = '127.0.0.3';
// Wrong keys allowed per address and key (and different wrong keys per address) a minute: low, so
// that the soak's share of wrong keys engages the throttle every minute.
const AUTH_FAILURES_PER_MINUTE = 4;
const MAX_INPUT_BYTES = 2 * 1024 * 1024;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (n: number) => (n / 1048576).toFixed(1);

// ---- the images ---------------------------------------------------------------------------------

const png = gradient(640, 480);
const images: Record<string, Buffer> = {
  'photo.png': png,
  'photo.jpg': await convert(png, 'jpeg', { quality: 85 }),
  'photo.webp': await convert(png, 'webp', { quality: 80 }),
  'subject.png': disc(320, 320, 110, [200, 40, 40], [240, 240, 240], { alpha: false }),
  'anim.gif': makeGif(64, 48, [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0]], { delay: 80 }),
  'garbage.bin': Buffer.from('this is not an image at all, only text pretending to be one'.repeat(20)),
  'truncated.png': png.subarray(0, Math.floor(png.length / 2)),
};
const oversize = Buffer.concat([images['photo.jpg']!, Buffer.alloc(MAX_INPUT_BYTES + 1024, 7)]);
// remove.bg's hostile bodies, as large as a body may be (MAX_INPUT_BYTES plus the form's allowance):
// values that are not scalars, unknown and repeated names, a text field past its bound.
const BODY_BOUND = MAX_INPUT_BYTES + 1024 * 1024;
const filled = (head: string, piece: string) => Buffer.from(head + piece.repeat(Math.ceil((BODY_BOUND - head.length) / piece.length))).subarray(0, BODY_BOUND);
const HOSTILE_BODIES = [
  { body: filled('{"tag":[', '{},'), type: 'application/json' },
  { body: filled('{"tag":"a"', ',"tag":"a"'), type: 'application/json' },
  { body: filled('{"tag":"', 'x'), type: 'application/json' },
  { body: filled('a', '&a'), type: 'application/x-www-form-urlencoded' },
  { body: filled('tag=', '%41'), type: 'application/x-www-form-urlencoded' },
];

// ---- the local image host (loopback) --------------------------------------------------------------

const host = http.createServer((req, res) => {
  const name = (req.url ?? '/').slice(1).split('?')[0]!;
  if (name === 'oversize.jpg') {
    res.writeHead(200, { 'Content-Type': 'image/jpeg', 'Content-Length': oversize.length });
    res.end(oversize);
    return;
  }
  if (name === 'oversize-chunked.jpg') {
    // No Content-Length: the server must cut it while streaming.
    res.writeHead(200, { 'Content-Type': 'image/jpeg' });
    let sent = 0;
    const pump = () => {
      while (sent < oversize.length) {
        const chunk = oversize.subarray(sent, sent + 65536);
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('close', () => (sent = oversize.length));
    pump();
    return;
  }
  const data = images[name];
  if (!data) {
    res.writeHead(404).end('no such image');
    return;
  }
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': data.length });
  res.end(data);
});
await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
const hostUrl = `http://127.0.0.1:${(host.address() as net.AddressInfo).port}`;
// A port nothing listens on: bound, then closed.
const closedPort = await new Promise<number>((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const p = (s.address() as net.AddressInfo).port;
    s.close(() => resolve(p));
  });
});

// ---- the server -----------------------------------------------------------------------------------

const resultsDir = await mkdtemp(join(tmpdir(), 'matte-soak-results-'));
const serverTmp = await mkdtemp(join(tmpdir(), 'matte-soak-tmp-'));
const child = spawn(process.execPath, [join(root, 'dist/server/main.js')], {
  cwd: root,
  env: {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    TMPDIR: serverTmp,
    MATTE_API_KEYS: KEY,
    MATTE_RESULTS_DIR: resultsDir,
    MATTE_RESULT_TTL_SECONDS: '30',
    MATTE_MAX_INPUT_BYTES: String(MAX_INPUT_BYTES),
    MATTE_ALLOW_PRIVATE_URLS: '1',
    MATTE_URL_PORTS: '*', // the image host listens on a random port
    MATTE_METRICS_ADDRESS: 'off',
    MATTE_CONCURRENCY: String(serverConcurrency),
    MATTE_LOG_LEVEL: 'warn',
    MATTE_AUTH_FAILURES_PER_MINUTE: String(AUTH_FAILURES_PER_MINUTE),
    MATTE_TRUSTED_PROXIES: PROXY,
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let serverOutput = '';
child.stdout!.on('data', (d) => (serverOutput += d));
child.stderr!.on('data', (d) => (serverOutput += d));
const base = await new Promise<string>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`the server did not start:\n${serverOutput}`)), 60_000);
  const check = () => {
    const m = /matte: listening on (http:\/\/\S+)/.exec(serverOutput);
    if (m) {
      clearTimeout(timer);
      resolve(m[1]!);
    }
  };
  child.stdout!.on('data', check);
  child.on('exit', (code) => reject(new Error(`the server exited (${code}) before listening:\n${serverOutput}`)));
});
const port = Number(new URL(base).port);
const pid = child.pid!;

// ---- requests -------------------------------------------------------------------------------------

type Field = string | { data: Buffer; filename: string };

function multipart(fields: Record<string, Field>): { body: Buffer; type: string } {
  const boundary = `----soak${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string') {
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
    } else {
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${value.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`), value.data, Buffer.from('\r\n'));
    }
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${boundary}` };
}

interface Answer {
  status: number;
  body: Buffer;
}

/**
 * A request on a new connection (no keep-alive: every request opens and closes a socket), from
 * `from` (a loopback address; default 127.0.0.1).
 */
function request(method: string, path: string, body?: { body: Buffer; type: string }, headers: Record<string, string> = { 'X-Api-Key': KEY }, from?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent: false, localAddress: from, headers: { ...headers, ...(body ? { 'Content-Type': body.type, 'Content-Length': body.body.length } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(120_000, () => req.destroy(new Error('client timeout')));
    req.end(body?.body);
  });
}

/** Sends the form's head and part of its body on a raw socket, then destroys the socket. */
function abortedUpload(form: { body: Buffer; type: string }): Promise<Answer> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.on('connect', () => {
      socket.write(`POST /images/edit HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${KEY}\r\nContent-Type: ${form.type}\r\nContent-Length: ${form.body.length}\r\n\r\n`);
      socket.write(form.body.subarray(0, Math.floor(form.body.length * (0.2 + Math.random() * 0.6))));
      setTimeout(() => {
        socket.destroy();
        resolve({ status: 0, body: Buffer.alloc(0) });
      }, 50 + Math.random() * 300);
    });
  });
}

/** Sends a whole valid form in small pieces over ~2 s, then reads the answer. */
function slowUpload(form: { body: Buffer; type: string }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = Buffer.alloc(0);
    socket.on('error', reject);
    socket.on('data', (d: Buffer) => (text = Buffer.concat([text, d])));
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text.toString('latin1'))?.[1] ?? 0), body: text }));
    socket.on('connect', async () => {
      socket.write(`POST /images/edit HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${KEY}\r\nConnection: close\r\nContent-Type: ${form.type}\r\nContent-Length: ${form.body.length}\r\n\r\n`);
      const pieces = 20;
      const size = Math.ceil(form.body.length / pieces);
      for (let i = 0; i < pieces && !socket.destroyed; i++) {
        socket.write(form.body.subarray(i * size, (i + 1) * size));
        await sleep(100);
      }
    });
  });
}

const file = (name: string): Field => ({ data: images[name]!, filename: name });
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
const EDITS = [
  '[{"resize":{"width":320}},{"blur":1.5}]',
  '[{"rotate":90},{"flip":"h"},{"brightness":1.2}]',
  '[{"resize":{"width":200,"height":200,"fit":"cover"}},{"saturation":0.5},{"trim":true}]',
  '[{"background":"#336699"},{"contrast":1.3}]',
];
const storedUrls: string[] = [];

/** Each kind of request: its weight in the mix, what it sends, and the statuses it may get. */
const KINDS: Record<string, { weight: number; expect: number[]; run: () => Promise<Answer> }> = {
  'edit upload': {
    weight: 20,
    expect: [200],
    run: async () => {
      const a = await request('POST', '/images/edit', multipart({ input: file(pick(['photo.png', 'photo.jpg', 'photo.webp', 'anim.gif'])), operations: pick(EDITS), format: pick(['png', 'webp', 'jpeg', 'gif']), output: pick(['url', 'raw']) }));
      if (a.status === 200 && a.body[0] === 0x7b) storedUrls.push(new URL((JSON.parse(a.body.toString()) as { url: string }).url).pathname);
      return a;
    },
  },
  'remove-background': {
    weight: 8,
    expect: [200],
    run: () => request('POST', '/images/remove-background', multipart({ input: file('subject.png'), format: pick(['png', 'webp']), trim: pick(['true', 'false']), output: 'raw' })),
  },
  'edit url input': {
    weight: 12,
    expect: [200],
    run: () => request('POST', '/images/edit', multipart({ input: `${hostUrl}/${pick(['photo.jpg', 'photo.png', 'anim.gif'])}`, operations: pick(EDITS), output: 'raw', format: 'webp' })),
  },
  'get stored result': {
    weight: 6,
    expect: [200, 404], // 404 once the result expired (TTL 30 s)
    run: () => (storedUrls.length ? request('GET', storedUrls[Math.floor(Math.random() * storedUrls.length)]!, undefined, {}) : request('GET', '/healthz', undefined, {})),
  },
  'aborted upload': {
    weight: 8,
    expect: [0],
    run: () => abortedUpload(multipart({ input: file('photo.png'), operations: EDITS[0]! })),
  },
  'slow client': {
    weight: 4,
    expect: [200],
    run: () => slowUpload(multipart({ input: file('photo.jpg'), operations: EDITS[1]!, output: 'raw' })),
  },
  'oversize upload': {
    weight: 4,
    expect: [413],
    run: () => request('POST', '/images/edit', multipart({ input: { data: oversize, filename: 'big.jpg' }, operations: EDITS[0]! })),
  },
  'oversize url': {
    weight: 3,
    expect: [413],
    run: () => request('POST', '/images/edit', multipart({ input: `${hostUrl}/${pick(['oversize.jpg', 'oversize-chunked.jpg'])}`, operations: EDITS[0]! })),
  },
  'garbage image': {
    weight: 6,
    expect: [415],
    run: () => request('POST', '/images/edit', multipart({ input: file(pick(['garbage.bin', 'truncated.png'])), operations: EDITS[0]! })),
  },
  'bad operations': {
    weight: 6,
    expect: [400],
    run: () => request('POST', '/images/edit', multipart({ input: file('photo.png'), operations: pick(['[{"blur":999}]', '[{"explode":true}]', 'not json', '[]']) })),
  },
  // The throttle: a stale key in a loop and a guesser's random keys from the guesser's address,
  // and a right key from there too; a wrong and a right key through the trusted proxy, for two
  // clients behind it (the right one sometimes from the guesser's own client address).
  'wrong key': {
    weight: 2,
    expect: [401, 429],
    run: () => request('POST', '/images/edit', multipart({ input: file('photo.png'), operations: EDITS[0]! }), { 'X-Api-Key': 'wrong' }, GUESSER),
  },
  'guessed key': {
    weight: 2,
    expect: [401, 429],
    run: () => request('POST', '/images/edit', multipart({ input: file('photo.png'), operations: EDITS[0]! }), { 'X-Api-Key': `guess-${Math.random().toString(36).slice(2)}` }, GUESSER),
  },
  'right key beside guesser': {
    weight: 2,
    expect: [200],
    run: () => request('POST', '/images/edit', multipart({ input: file('photo.jpg'), operations: pick(EDITS), output: 'raw' }), { 'X-Api-Key': KEY }, GUESSER),
  },
  'wrong key via proxy': {
    weight: 2,
    expect: [401, 429],
    run: () => request('POST', '/images/edit', multipart({ input: file('photo.png'), operations: EDITS[0]! }), { 'X-Api-Key': pick(['wrong', `guess-${Math.random().toString(36).slice(2)}`]), 'X-Forwarded-For': '203.0.113.7' }, PROXY),
  },
  'right key via proxy': {
    weight: 2,
    expect: [200],
    run: () => request('POST', '/images/edit', multipart({ input: file('photo.jpg'), operations: pick(EDITS), output: 'raw' }), { 'X-Api-Key': KEY, 'X-Forwarded-For': pick(['203.0.113.7', '203.0.113.8']) }, PROXY),
  },
  // remove.bg's API: an image in base64 answered as an image, as JSON or as a zip; and now and
  // then a hostile body as large as a body may be, refused where it turns hostile.
  'removebg base64': {
    weight: 4,
    expect: [200],
    run: () =>
      request(
        'POST',
        '/v1.0/removebg',
        { body: Buffer.from(JSON.stringify({ image_file_b64: images['subject.png']!.toString('base64'), size: 'full', format: pick(['png', 'zip']) })), type: 'application/json' },
        { 'X-Api-Key': KEY, Accept: pick(['image/*', 'application/json']) },
      ),
  },
  'hostile body': {
    weight: 2,
    expect: [400],
    run: () => request('POST', pick(['/v1.0/removebg', '/v1.0/improve']), pick(HOSTILE_BODIES)),
  },
  'bad url': {
    weight: 4,
    expect: [422],
    run: () => request('POST', '/images/edit', multipart({ input: pick([`${hostUrl}/missing.png`, `http://127.0.0.1:${closedPort}/x.png`]), operations: EDITS[0]! })),
  },
};
const totalWeight = Object.values(KINDS).reduce((s, k) => s + k.weight, 0);
const onlyKinds = args.only ? args.only.split(',') : [];
function pickKind(): string {
  if (onlyKinds.length) return pick(onlyKinds);
  let r = Math.random() * totalWeight;
  for (const [name, k] of Object.entries(KINDS)) if ((r -= k.weight) < 0) return name;
  return 'edit upload';
}

// ---- sampling ----------------------------------------------------------------------------------------

interface Sample {
  t: number;
  rss: number;
  fds: number;
  resultFiles: number;
  resultBytes: number;
  resultTemp: number;
  tmpFiles: number;
  inflight: number;
}

async function countFiles(dir: string): Promise<{ files: number; bytes: number; temp: number }> {
  let files = 0, bytes = 0, temp = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (!entry.isFile()) continue;
    files++;
    if (entry.name.startsWith('.tmp-')) temp++;
    bytes += (await stat(join(entry.parentPath ?? dir, entry.name)).catch(() => ({ size: 0 }))).size;
  }
  return { files, bytes, temp };
}

let inflight = 0;
async function sample(started: number): Promise<Sample> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
  const fds = (await readdir(`/proc/${pid}/fd`)).length;
  const results = await countFiles(resultsDir);
  const tmp = await countFiles(serverTmp);
  return { t: (Date.now() - started) / 1000, rss, fds, resultFiles: results.files, resultBytes: results.bytes, resultTemp: results.temp, tmpFiles: tmp.files, inflight };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : 0;
};

// ---- the run -----------------------------------------------------------------------------------------

const statuses = new Map<string, Map<number, number>>();
const unexpected: string[] = [];
let sent = 0, skipped = 0, clientErrors = 0;

async function one(kind: string): Promise<void> {
  inflight++;
  try {
    const a = await KINDS[kind]!.run();
    const byStatus = statuses.get(kind) ?? new Map<number, number>();
    byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
    statuses.set(kind, byStatus);
    if (!KINDS[kind]!.expect.includes(a.status) && unexpected.length < 20) unexpected.push(`${kind}: ${a.status} ${a.body.subarray(0, 300).toString()}`);
  } catch (err) {
    clientErrors++;
    if (unexpected.length < 20) unexpected.push(`${kind}: client error ${(err as Error).message}`);
  } finally {
    inflight--;
  }
}

async function idle(): Promise<Sample> {
  // The load has stopped: wait for the answers, then for the server to close what it closes lazily.
  const until = Date.now() + 60_000;
  while (inflight > 0 && Date.now() < until) await sleep(100);
  await sleep(3000);
  return sample(startedAt);
}

const startedAt = Date.now();
const samples: Sample[] = [];
console.log(`soak: ${args.minutes} min, ${rate} requests/s, at most ${maxInflight} in flight (server concurrency ${serverConcurrency}); server pid ${pid} at ${base}, image host ${hostUrl}`);
console.log(`soak: ${'t(s)'.padStart(6)} ${'RSS MB'.padStart(7)} ${'fds'.padStart(4)} ${'results'.padStart(8)} ${'res MB'.padStart(7)} ${'tmp'.padStart(4)} ${'sent'.padStart(6)}`);
const sampler = setInterval(async () => {
  const s = await sample(startedAt).catch(() => undefined);
  if (!s) return;
  samples.push(s);
  if (samples.length % 5 === 1) console.log(`soak: ${s.t.toFixed(0).padStart(6)} ${mb(s.rss).padStart(7)} ${String(s.fds).padStart(4)} ${String(s.resultFiles).padStart(8)} ${mb(s.resultBytes).padStart(7)} ${String(s.tmpFiles + s.resultTemp).padStart(4)} ${String(sent).padStart(6)}`);
}, 2000);

let warmIdle: Sample | undefined;
const interval = 1000 / rate;
let next = Date.now();
while (Date.now() - startedAt < durationMs && sent < maxRequests) {
  if (!warmIdle && Date.now() - startedAt >= warmupMs) {
    warmIdle = await idle(); // the baseline for descriptors and temporary files
    console.log(`soak: idle after warm-up: ${warmIdle.fds} fds, ${warmIdle.tmpFiles + warmIdle.resultTemp} temporary files, RSS ${mb(warmIdle.rss)} MB`);
    next = Date.now();
  }
  if (inflight < maxInflight) {
    sent++;
    void one(pickKind());
  } else skipped++;
  next += interval;
  await sleep(Math.max(0, next - Date.now()));
}
const endIdle = await idle();
clearInterval(sampler);
child.kill('SIGTERM');
const exitCode = await new Promise<number | string>((r) => (child.exitCode !== null ? r(child.exitCode) : child.on('exit', (code, signal) => r(code ?? signal ?? -1))));
host.close();

// ---- verdict -----------------------------------------------------------------------------------------

const loaded = samples.filter((s) => s.t * 1000 >= warmupMs);
const quarter = Math.floor(loaded.length / 4);
const quarters = [0, 1, 2, 3].map((i) => median(loaded.slice(i * quarter, i === 3 ? undefined : (i + 1) * quarter).map((s) => s.rss)));
const [, q2 = 0, , q4 = 0] = quarters;
const failures: string[] = [];
let fiveHundreds = 0;
for (const byStatus of statuses.values()) for (const [status, n] of byStatus) if (status >= 500) fiveHundreds += n;
if (fiveHundreds) failures.push(`${fiveHundreds} answers were 5xx`);
if (quarter >= 1 && q4 > q2 * 1.1 && q4 - q2 > 24 * 1048576) failures.push(`RSS not flat: median ${mb(q2)} MB in the second quarter, ${mb(q4)} MB in the last`);
if (warmIdle && endIdle.fds > warmIdle.fds) failures.push(`descriptors leaked: ${warmIdle.fds} idle after warm-up, ${endIdle.fds} idle at the end`);
// TMPDIR is compared with the idle count after warm-up: ONNX Runtime writes two files there when
// the process creates its environment (.ses and mat-debug-PID.log), once, not per request.
const tempAtEnd = endIdle.tmpFiles + endIdle.resultTemp;
const tempAfterWarmup = warmIdle ? warmIdle.tmpFiles + warmIdle.resultTemp : 0;
if (tempAtEnd > tempAfterWarmup || endIdle.resultTemp > 0) failures.push(`temporary files left: ${tempAtEnd} at the end (TMPDIR ${endIdle.tmpFiles}, results ${endIdle.resultTemp}), ${tempAfterWarmup} after warm-up`);
const errorLogs = serverOutput.split('\n').filter((line) => /"level":(50|60)/.test(line));
if (errorLogs.length) failures.push(`${errorLogs.length} error lines in the server's log`);
if (unexpected.length) failures.push(`${unexpected.length} answers of a status their kind never gets`);
if (exitCode !== 0) failures.push(`the server exited with ${exitCode} on SIGTERM`);
// Every kind but the wrong keys sends the right key (or none is needed): none may ever be 429.
const WRONG_KEY_KINDS = ['wrong key', 'guessed key', 'wrong key via proxy'];
let rightKey429 = 0, wrongKey429 = 0;
for (const [kind, byStatus] of statuses) {
  if (WRONG_KEY_KINDS.includes(kind)) wrongKey429 += byStatus.get(429) ?? 0;
  else rightKey429 += byStatus.get(429) ?? 0;
}
if (rightKey429) failures.push(`${rightKey429} requests with the right key were answered 429`);
const wrongKeysSent = WRONG_KEY_KINDS.reduce((n, kind) => n + [...(statuses.get(kind)?.values() ?? [])].reduce((a, b) => a + b, 0), 0);
if (wrongKeysSent > 4 * AUTH_FAILURES_PER_MINUTE && wrongKey429 === 0) failures.push(`${wrongKeysSent} wrong keys and not one 429: the throttle did not engage`);

const rssAll = loaded.map((s) => s.rss);
console.log('\nsoak: statuses by kind');
for (const [kind, byStatus] of [...statuses.entries()].sort()) {
  console.log(`  ${kind.padEnd(20)} ${[...byStatus.entries()].sort().map(([s, n]) => `${s === 0 ? 'no answer' : s}: ${n}`).join(', ')}`);
}
console.log(`soak: wrong keys ${wrongKeysSent}, of which 429 ${wrongKey429}; right keys answered 429: ${rightKey429}`);
console.log(`soak: ${sent} requests in ${((Date.now() - startedAt) / 1000).toFixed(0)} s (${skipped} slots skipped at the in-flight cap), ${clientErrors} client errors, ${fiveHundreds} 5xx`);
console.log(`soak: RSS MB after warm-up: min ${mb(Math.min(...rssAll))}, max ${mb(Math.max(...rssAll))}, median by quarter ${quarters.map(mb).join(' / ')}`);
console.log(`soak: fds idle after warm-up ${warmIdle?.fds ?? 'n/a'}, idle at the end ${endIdle.fds}, max under load ${Math.max(...samples.map((s) => s.fds))}`);
console.log(`soak: results dir at the end ${endIdle.resultFiles} files, ${mb(endIdle.resultBytes)} MB (max ${Math.max(...samples.map((s) => s.resultFiles))} files); temporary files ${tempAfterWarmup} after warm-up, ${tempAtEnd} at the end; ${errorLogs.length} error lines in the server's log`);
for (const u of unexpected) console.log(`  unexpected: ${u.replace(/\s+/g, ' ').slice(0, 200)}`);
await rm(resultsDir, { recursive: true, force: true });
await rm(serverTmp, { recursive: true, force: true });
if (failures.length) {
  console.log(`soak: FAILED\n  ${failures.join('\n  ')}`);
  if (serverOutput.trim()) console.log(`server output (last 3000 characters):\n${serverOutput.slice(-3000)}`);
  process.exit(1);
}
console.log('soak: passed (0 5xx, no right key answered 429, the throttle engaged, RSS flat, no descriptor or temporary file left, no error logged)');
process.exit(0);
