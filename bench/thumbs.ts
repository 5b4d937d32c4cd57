// The thumbnail part of the bench (`--only=thumbs`, bench/README.md "Thumbnails"): matte's server
// against IPX (npm `ipx`, on its own sharp) on the everyday request of an image service, a JPEG made
// smaller for a page. One loopback origin in this process serves the sources; each server fetches
// them on every request (no result cache on either side). Arms, alternated round by round: matte's
// signed GET naming the source's URL, matte's POST with the file uploaded and `output=raw`, and
// IPX's GET of its HTTP source. Beside them, the codec floor: the decode at the DCT scale the
// request allows plus the encode of the final image, through the same libjpeg-turbo and libwebp
// (the probes build's codecFloor, bench/workers/thumbs-floor.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { INPUTS, OUT, OUTPUTS, ROOT, WORKERS, runWorker } from './common.js';
import { API_KEY, listening, load, multipart, startServer, stopServer, waitReady, type LoadResult } from './http.js';
import { INPUT_FILES } from './pipelines.js';

export interface ThumbTask {
  id: 'T1' | 'T2';
  title: string;
  input: string;
  width: number;
  format: 'webp' | 'jpeg';
  quality: number;
}

export const THUMB_TASKS: ThumbTask[] = [
  { id: 'T1', title: '2000x1333 JPEG to 400 wide WebP q80', input: INPUT_FILES.thumbSource, width: 400, format: 'webp', quality: 80 },
  { id: 'T2', title: '4000x3000 JPEG to 1200 wide JPEG q80', input: INPUT_FILES.photo, width: 1200, format: 'jpeg', quality: 80 },
];

export interface ThumbsPlan {
  rounds: number;
  /** Requests per arm, task and round (T1, T2). */
  requests: Record<ThumbTask['id'], number>;
  /** Requests per arm and task before the first round. */
  warmup: number;
  connections: number;
}

type Arm = 'matte GET' | 'matte POST' | 'IPX GET';
const ARMS: Arm[] = ['matte GET', 'matte POST', 'IPX GET'];

export interface ThumbArm {
  arm: Arm;
  requests: number;
  perSecond: number;
  serverCpuMs: number;
  p50: number;
  errors: number;
}

export interface ThumbResult {
  task: ThumbTask;
  arms: Record<Arm, ThumbArm>;
  floor: { shrink: number; decodeMs: number; encodeMs: number; totalMs: number; decodedWidth: number; decodedHeight: number };
  outputs: Record<Arm, { file: string; bytes: number; width: number; height: number }>;
  /** Mean absolute difference (0..255) of each output from the full-resolution reference. */
  quality: Record<Arm, number | null>;
}

const SIGNING_KEY = 'bench-signing-key-0123456789abcdef0123456789';
const EXT = { webp: 'webp', jpeg: 'jpg' } as const;

/** The signed path of an edit (docs/api.md, "Signed URLs"); lib/signed-url.ts's signUrl, without loading the addon here. */
function signedPath(options: object, format: string): string {
  const rest = `/${Buffer.from(JSON.stringify(options)).toString('base64url')}.${format}`;
  return `/images/signed/${createHmac('sha256', SIGNING_KEY).update(rest).digest('base64url')}${rest}`;
}

/** The loopback origin both servers fetch from: each source from memory, by its file name. */
function startOrigin(files: string[]): Promise<{ server: Server; url: string }> {
  const bodies = new Map(files.map((f) => [`/${f}`, readFileSync(join(INPUTS, f))]));
  const server = createServer((req, res) => {
    const body = bodies.get(req.url ?? '');
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': body.length });
    res.end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

/** IPX with its defaults, its HTTP source allowed to reach the origin (bench/workers/ipx-server.ts). */
function startIpx(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(WORKERS, 'ipx-server.js')], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  return listening(child, 'IPX', /ipx: listening on (http:\/\/\S+)/);
}

interface Target {
  label: Arm;
  pid: number;
  url: string;
  path: string;
  body?: { body: Buffer; contentType: string };
}

export async function runThumbs(plan: ThumbsPlan, log: (line: string) => void): Promise<ThumbResult[]> {
  const origin = await startOrigin([...new Set(THUMB_TASKS.map((t) => t.input))]);
  const resultsDir = join(OUT, 'thumbs-results');
  rmSync(resultsDir, { recursive: true, force: true });
  mkdirSync(resultsDir, { recursive: true, mode: 0o700 });
  let matte: { child: ChildProcess; url: string } | undefined;
  let ipx: { child: ChildProcess; url: string } | undefined;
  try {
    const port = new URL(origin.url).port;
    // The result cache off: compute is compared (a repeated GET would otherwise be a cache hit).
    matte = await startServer(resultsDir, ['u2netp'], { MATTE_URL_SIGNING_KEYS: SIGNING_KEY, MATTE_ALLOW_PRIVATE_URLS: '1', MATTE_URL_PORTS: port, MATTE_RESULT_CACHE_MAX_BYTES: '0' });
    await waitReady(matte.url);
    ipx = await startIpx();
    const results: ThumbResult[] = [];
    for (const task of THUMB_TASKS) {
      const source = `${origin.url}/${task.input}`;
      const operations = [{ resize: { width: task.width } }];
      const form = multipart(
        { operations: JSON.stringify(operations), format: task.format, quality: String(task.quality), output: 'raw' },
        { name: 'input', filename: task.input, type: 'image/jpeg', data: readFileSync(join(INPUTS, task.input)) },
      );
      const targets: Record<Arm, Target> = {
        'matte GET': { label: 'matte GET', pid: matte.child.pid!, url: matte.url, path: signedPath({ input: source, operations, quality: task.quality }, task.format) },
        'matte POST': { label: 'matte POST', pid: matte.child.pid!, url: matte.url, path: '/images/edit', body: form },
        'IPX GET': { label: 'IPX GET', pid: ipx.child.pid!, url: ipx.url, path: `/w_${task.width}&f_${task.format}&q_${task.quality}/${source}` },
      };
      // One answer of each, checked and kept: the bench measures successes, and compares their bytes.
      const outputs = {} as ThumbResult['outputs'];
      for (const arm of ARMS) {
        const t = targets[arm];
        const res = await fetch(`${t.url}${t.path}`, t.body ? { method: 'POST', headers: { 'content-type': t.body.contentType, 'x-api-key': API_KEY }, body: new Uint8Array(t.body.body) } : {});
        const data = Buffer.from(await res.arrayBuffer());
        if (res.status !== 200) throw new Error(`${task.id} ${arm}: ${res.status} ${data.toString().slice(0, 300)}`);
        const file = join(OUTPUTS, `thumbs-${task.id}-${arm.replace(' ', '-').toLowerCase()}.${EXT[task.format]}`);
        writeFileSync(file, data);
        outputs[arm] = { file, bytes: data.length, width: 0, height: 0 };
      }
      for (const arm of ARMS) await load(`warm-up ${arm}`, targets[arm].pid, targets[arm].url, targets[arm].path, targets[arm].body, plan.connections, plan.warmup);
      const runs: Record<Arm, LoadResult[]> = { 'matte GET': [], 'matte POST': [], 'IPX GET': [] };
      for (let round = 0; round < plan.rounds; round++) {
        // matte GET, matte POST, IPX; then IPX, matte POST, matte GET; ...: drifts land on every arm.
        const order = round % 2 === 0 ? ARMS : [...ARMS].reverse();
        for (const arm of order) {
          const t = targets[arm];
          const r = await load(`${task.id} ${arm}, round ${round + 1}`, t.pid, t.url, t.path, t.body, plan.connections, plan.requests[task.id]);
          log(`  ${r.name}: ${r.perSecond.toFixed(1)} req/s, server CPU ${r.serverCpuMsPerRequest.toFixed(1)} ms a request, p50 ${r.p50} ms, errors ${r.errors}`);
          runs[arm].push(r);
        }
      }
      const arms = {} as ThumbResult['arms'];
      for (const arm of ARMS) {
        const rs = runs[arm];
        const requests = rs.reduce((n, r) => n + r.requests, 0);
        arms[arm] = {
          arm,
          requests,
          perSecond: requests / rs.reduce((n, r) => n + r.seconds, 0),
          serverCpuMs: rs.reduce((n, r) => n + r.serverCpuMsPerRequest * r.requests, 0) / requests,
          p50: rs.map((r) => r.p50).sort((a, b) => a - b)[rs.length >> 1]!,
          errors: rs.reduce((n, r) => n + r.errors, 0),
        };
      }
      results.push({ task, arms, outputs, floor: undefined as never, quality: {} as ThumbResult['quality'] });
    }
    // The floor and the quality, in their own processes (the probes build; sharp), after the load.
    const floors = await runWorker<Array<ThumbResult['floor']>>('thumbs-floor', {
      tasks: results.map((r) => ({ input: r.task.input, width: r.task.width, format: r.task.format, quality: r.task.quality })),
    });
    const quality = await runWorker<Array<Array<{ width: number; height: number; mad: number | null }>>>('thumbs-quality', {
      tasks: results.map((r) => ({ input: r.task.input, width: r.task.width, outputs: ARMS.map((a) => r.outputs[a].file) })),
    });
    results.forEach((r, i) => {
      r.floor = floors[i]!;
      ARMS.forEach((arm, j) => {
        const q = quality[i]![j]!;
        r.outputs[arm].width = q.width;
        r.outputs[arm].height = q.height;
        r.quality[arm] = q.mad;
      });
    });
    return results;
  } finally {
    if (matte) await stopServer(matte.child);
    if (ipx) await stopServer(ipx.child);
    origin.server.close();
    rmSync(resultsDir, { recursive: true, force: true });
  }
}
