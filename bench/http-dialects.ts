// The foreign URL dialects and the result cache (issue 44), through the real server in a child
// process, the source served by a loopback origin in this process:
//   1. the same edit (a 640x480 JPEG to 320 wide WebP q80) through a Cloudflare URL and through
//      matte's signed GET, the result cache off so both run their job, one connection, many short
//      alternated rounds (a drift of a shared machine lands on both); target: <= 1.03x;
//   2. with the result cache on, a page's image made from a photo (4000x3000 JPEG to 800 wide
//      WebP): misses (every request another width, so a job each) against hits (one URL, answered
//      from the cache, the source revalidated by a conditional request each time) at 4
//      connections: the server's CPU a request (target: a hit <= 5% of a miss) and requests a
//      second (target: hits >= 10x misses).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { signUrl } from '../lib/signed-url.js';
import { INPUTS, OUT } from './common.js';
import { startServer, stopServer, treeCpuMs, waitReady } from './http.js';
import { INPUT_FILES } from './pipelines.js';

const KEY = 'bench-signing-key-0123456789abcdef0123456789';
export const DIALECT_ROUNDS = 20;

export interface GetLoad {
  name: string;
  requests: number;
  seconds: number;
  perSecond: number;
  errors: number;
  serverCpuMsPerRequest: number;
}

export interface DialectResults {
  rounds: number;
  requestsPerArm: number;
  signedMs: number;
  dialectMs: number;
  /** dialectMs / signedMs (target <= 1.03). */
  ratio: number;
  signedCpuMs: number;
  dialectCpuMs: number;
  cpuRatio: number;
  misses: GetLoad;
  hits: GetLoad;
  /** hit CPU / miss CPU a request (target <= 0.05). */
  hitCpuShare: number;
  /** hits' requests a second / misses' (target >= 10). */
  hitThroughput: number;
}

/** GETs at `connections`, `amount` of them; `path(i)` gives the i-th request's path. */
async function getLoad(name: string, pid: number, url: string, path: (i: number) => string, connections: number, amount: number): Promise<GetLoad> {
  let i = 0;
  const cpu = treeCpuMs(pid);
  const result = await autocannon({
    url,
    connections,
    amount,
    timeout: 60,
    sampleInt: 20,
    requests: [{ method: 'GET', setupRequest: (req: Record<string, unknown>) => ({ ...req, path: path(i++) }) }],
  });
  const completed = result['2xx'] + result.non2xx;
  const seconds = (new Date(result.finish).getTime() - new Date(result.start).getTime()) / 1000;
  return { name, requests: completed, seconds, perSecond: completed / seconds, errors: result.non2xx + result.errors + result.timeouts, serverCpuMsPerRequest: (treeCpuMs(pid) - cpu) / completed };
}

/** The origin: /photo.jpg and /small.jpg, with an ETag and no Cache-Control (so every repeat revalidates: the dearer hit). */
async function startOrigin(files: Record<string, Buffer>): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const body = files[req.url ?? ''];
    if (!body) return res.writeHead(404).end();
    if (req.headers['if-none-match'] === `"${req.url}"`) return res.writeHead(304, { ETag: `"${req.url}"` }).end();
    res.writeHead(200, { 'Content-Type': 'image/jpeg', 'Content-Length': body.length, ETag: `"${req.url}"` }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

export async function runDialects(requestsPerRound: number, cacheRequests: number, log: (line: string) => void): Promise<DialectResults> {
  const origin = await startOrigin({ '/small.jpg': readFileSync(join(INPUTS, INPUT_FILES.small)), '/photo.jpg': readFileSync(join(INPUTS, INPUT_FILES.photo)) });
  const env = { MATTE_SOURCE_BASE: `${origin.url}/`, MATTE_ALLOW_PRIVATE_URLS: '1', MATTE_URL_PORTS: '*', MATTE_URL_SIGNING_KEYS: KEY, MATTE_LOG_LEVEL: 'warn' };
  const dir = (name: string) => {
    const d = join(OUT, name);
    rmSync(d, { recursive: true, force: true });
    mkdirSync(d, { recursive: true, mode: 0o700 });
    return d;
  };
  try {
    // 1. The same edit, two URLs, no cache.
    const cold = await startServer(dir('server-results-dialects'), ['u2netp'], { ...env, MATTE_RESULT_CACHE_MAX_BYTES: '0' });
    let ratio: Pick<DialectResults, 'signedMs' | 'dialectMs' | 'ratio' | 'signedCpuMs' | 'dialectCpuMs' | 'cpuRatio'>;
    try {
      await waitReady(cold.url);
      const pid = cold.child.pid!;
      const arms = [
        { name: 'signed GET', path: signUrl({ input: `${origin.url}/small.jpg`, operations: [{ resize: { width: 320, fit: 'scale-down' } }], quality: 80 }, { key: KEY, format: 'webp' }) },
        { name: 'Cloudflare URL', path: '/cdn-cgi/image/width=320,format=webp,quality=80/small.jpg' },
      ];
      for (const arm of arms) {
        const res = await fetch(cold.url + arm.path);
        const type = res.headers.get('content-type');
        await res.arrayBuffer();
        if (res.status !== 200 || type !== 'image/webp') throw new Error(`${arm.name}: the check request got ${res.status} ${type}`);
        await getLoad(`warm-up ${arm.name}`, pid, cold.url, () => arm.path, 1, 8);
      }
      const by = new Map<string, GetLoad[]>(arms.map((a) => [a.name, []]));
      for (let round = 1; round <= DIALECT_ROUNDS; round++) {
        for (const arm of round % 2 === 1 ? arms : [...arms].reverse()) by.get(arm.name)!.push(await getLoad(`${arm.name}, round ${round}`, pid, cold.url, () => arm.path, 1, requestsPerRound));
      }
      const ms = (rs: GetLoad[]) => (1000 * rs.reduce((n, r) => n + r.seconds, 0)) / rs.reduce((n, r) => n + r.requests, 0);
      const cpu = (rs: GetLoad[]) => rs.reduce((n, r) => n + r.serverCpuMsPerRequest * r.requests, 0) / rs.reduce((n, r) => n + r.requests, 0);
      const [signed, dialect] = [by.get('signed GET')!, by.get('Cloudflare URL')!];
      ratio = { signedMs: ms(signed), dialectMs: ms(dialect), ratio: ms(dialect) / ms(signed), signedCpuMs: cpu(signed), dialectCpuMs: cpu(dialect), cpuRatio: cpu(dialect) / cpu(signed) };
      log(`  same edit, c=1, ${DIALECT_ROUNDS} rounds: signed ${ratio.signedMs.toFixed(1)} ms (CPU ${ratio.signedCpuMs.toFixed(1)}), Cloudflare ${ratio.dialectMs.toFixed(1)} ms (CPU ${ratio.dialectCpuMs.toFixed(1)})`);
    } finally {
      await stopServer(cold.child);
    }
    // 2. Hits against misses, the cache on.
    const warm = await startServer(dir('server-results-dialects-cache'), ['u2netp'], env);
    try {
      await waitReady(warm.url);
      const pid = warm.child.pid!;
      // A page's image made from a photo (4000x3000 JPEG to 800 wide WebP): the job a hit spares.
      const hitPath = '/cdn-cgi/image/width=800,format=webp,quality=80/photo.jpg';
      await fetch(warm.url + hitPath).then((r) => r.arrayBuffer());
      await getLoad('warm-up hits', pid, warm.url, () => hitPath, 4, 50);
      // Each miss another width: a job each (and an answer written to the cache, as a real miss).
      const misses = await getLoad('misses, c=4', pid, warm.url, (i) => `/cdn-cgi/image/width=${600 + (i % 400)},format=webp,quality=80/photo.jpg`, 4, Math.min(cacheRequests, 400) / 5);
      const hits = await getLoad('hits, c=4', pid, warm.url, () => hitPath, 4, cacheRequests * 10);
      log(`  c=4: misses ${misses.perSecond.toFixed(1)}/s (CPU ${misses.serverCpuMsPerRequest.toFixed(2)} ms), hits ${hits.perSecond.toFixed(1)}/s (CPU ${hits.serverCpuMsPerRequest.toFixed(2)} ms), errors ${misses.errors + hits.errors}`);
      return { rounds: DIALECT_ROUNDS, requestsPerArm: requestsPerRound * DIALECT_ROUNDS, ...ratio, misses, hits, hitCpuShare: hits.serverCpuMsPerRequest / misses.serverCpuMsPerRequest, hitThroughput: hits.perSecond / misses.perSecond };
    } finally {
      await stopServer(warm.child);
    }
  } finally {
    await origin.close();
  }
}
