// The HTTP part of the bench: starts `node dist/server/main.js` as a child process on 127.0.0.1
// (any free port), loads it with autocannon from this process, and reads the server's RSS from
// /proc. Only loopback is ever addressed. Every run is bounded by a request count.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { INPUTS, OUT, ROOT } from './common.js';
import { INPUT_FILES, SMALL_EDIT } from './pipelines.js';

export const API_KEY = 'bench-key-0123456789abcdef0123456789abcdef';

export interface LoadResult {
  name: string;
  connections: number;
  requests: number;
  seconds: number;
  /** Completed requests per second (all statuses). */
  perSecond: number;
  ok: number;
  /** 503 overloaded: the queue was full (counted apart from errors). */
  overloaded: number;
  /** Any other non-2xx status, socket errors and timeouts. */
  errors: number;
  statuses: Record<string, number>;
  p50: number;
  p99: number;
  /** CPU time per completed request: the server's (its process tree) and autocannon's (this process). */
  serverCpuMsPerRequest: number;
  clientCpuMsPerRequest: number;
}

export interface HttpResults {
  server: { concurrency?: number; url: string };
  check: { status: number; contentType: string | null; width: string | null; height: string | null };
  runs: LoadResult[];
  rssMB: { afterWarmup: number; afterRawRequests: number; afterAll: number; rawRequests: number };
  rssGrowthMB: number;
  shareAB: ShareAB;
}

/** The processes of a tree: pid and its descendants. */
function tree(pid: number, visit: (p: number) => void): void {
  const walk = (p: number) => {
    try {
      visit(p);
      for (const task of readdirSync(`/proc/${p}/task`)) {
        const children = readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').trim();
        for (const child of children ? children.split(/\s+/) : []) walk(Number(child));
      }
    } catch {
      // the process ended
    }
  };
  walk(pid);
}

/** Resident set of a process and its descendants, MB. */
function treeRssMB(pid: number): number {
  let total = 0;
  tree(pid, (p) => {
    const status = readFileSync(`/proc/${p}/status`, 'utf8');
    total += Number(status.match(/^VmRSS:\s+(\d+)/m)?.[1] ?? 0) / 1024;
  });
  return total;
}

/** CPU time (user + system) of a process and its descendants, ms (clock ticks of 10 ms). */
export function treeCpuMs(pid: number): number {
  let ticks = 0;
  tree(pid, (p) => {
    const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
    ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
  });
  return ticks * 10;
}

/** One multipart/form-data body, built once and sent as is by every request. */
export function multipart(fields: Record<string, string>, file: { name: string; filename: string; type: string; data: Buffer }) {
  const boundary = `----matte-bench-${Date.now().toString(16)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  parts.push(
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${file.filename}"\r\nContent-Type: ${file.type}\r\n\r\n`),
    file.data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/**
 * The bench's server on loopback (any free port) with its key, results directory and models; `env`
 * adds to them. The matte cache is off: the bench sends the same image again and again, and measures
 * the model's path, not a cache hit (bench:matte-cache measures those).
 */
export function startServer(resultsDir: string, models: string[], env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'server', 'main.js')], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', MATTE_API_KEYS: API_KEY, MATTE_RESULTS_DIR: resultsDir, MATTE_MODELS: models.join(','), MATTE_METRICS_ADDRESS: 'off', MATTE_MATTE_CACHE_MAX_BYTES: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return listening(child, 'the server', /matte: listening on (http:\/\/\S+)/);
}

/** The URL a child server prints (`pattern`'s group) once it listens; its log is drained meanwhile and after. */
export function listening(child: ChildProcess, name: string, pattern: RegExp): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start within 60 s: ${err.slice(-2000)}`));
    }, 60_000);
    // The log is drained (and dropped): a pipe nobody reads would block the server.
    child.stdout!.on('data', (d: Buffer) => {
      if (out.length < 100_000) out += d.toString();
      const match = out.match(pattern);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1]! });
      }
    });
    child.stderr!.on('data', (d: Buffer) => {
      if (err.length < 100_000) err += d.toString();
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}: ${err.slice(-2000)}`));
    });
  });
}

export async function waitReady(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.status === 200) return;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the server was not ready within 60 s');
}

/** `amount` requests at `connections`: a POST of `body` with the bench's key, or without a body a plain GET. */
export async function load(name: string, pid: number, url: string, path: string, body: { body: Buffer; contentType: string } | undefined, connections: number, amount: number): Promise<LoadResult> {
  const serverCpu = treeCpuMs(pid);
  const clientCpu = process.cpuUsage();
  const result = await autocannon({
    url: `${url}${path}`,
    ...(body ? { method: 'POST' as const, headers: { 'content-type': body.contentType, 'x-api-key': API_KEY }, body: body.body } : { method: 'GET' as const }),
    connections,
    amount,
    timeout: 60,
    // autocannon ends a run on its next sample tick (default every 1000 ms), so with the default a
    // run of `amount` requests is timed up to the next whole second: sample every 20 ms instead.
    sampleInt: 20,
  });
  const serverCpuMs = treeCpuMs(pid) - serverCpu;
  const client = process.cpuUsage(clientCpu);
  const statuses: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = (stats as { count: number }).count;
  const ok = result['2xx'];
  const overloaded = statuses['503'] ?? 0;
  const completed = ok + result.non2xx;
  const seconds = (new Date(result.finish).getTime() - new Date(result.start).getTime()) / 1000;
  return {
    name,
    connections,
    requests: completed,
    seconds,
    perSecond: completed / seconds,
    ok,
    overloaded,
    errors: result.non2xx - overloaded + result.errors + result.timeouts,
    statuses,
    p50: result.latency.p50,
    p99: result.latency.p99,
    serverCpuMsPerRequest: serverCpuMs / completed,
    clientCpuMsPerRequest: (client.user + client.system) / 1000 / completed,
  };
}

export interface HttpPlan {
  /** Raw-edit requests at concurrency 1, 4 and 16 (their sum is the RSS-growth window). */
  raw: [number, number, number];
  /** Remove-background requests at concurrency 1 and 4, with the first model. */
  bg: [number, number];
  /** Remove-background requests at concurrency 1 with each further model (one at a time: its time per image). */
  bgOtherModels: number;
  /**
   * Remove-background requests at concurrency 4 (first model) per arm and round, SHARE_AB_ROUNDS
   * rounds alternated between two fresh servers: one as configured (a job alone gets every core)
   * and one with MATTE_JOB_THREADS = floor(cores / MATTE_CONCURRENCY), i.e. every job with a fixed
   * share as before issue 11: the cores given to a lone job must not cost throughput under load.
   */
  shareAB: number;
  /**
   * Raw edits before any measured window (and lib/'s warm-up jobs in run.ts). V8 keeps optimising
   * the server's JavaScript for thousands of requests (bench/README.md, "HTTP"); a server runs far
   * longer than that, so the windows measure its steady state.
   */
  warmup: number;
}

export interface ShareAB {
  jobThreads: number;
  rounds: number;
  /** Completed requests per second over all rounds: as configured, and with a fixed share. */
  shared: number;
  fixed: number;
  /** Server CPU ms per request over all rounds. */
  sharedCpuMs: number;
  fixedCpuMs: number;
}

/** `models`: the models the server loads (MATTE_MODELS), the first the default; each gets remove-background runs. */
export async function runHttp(plan: HttpPlan, models: string[], log: (line: string) => void): Promise<HttpResults> {
  const resultsDir = join(OUT, 'server-results');
  rmSync(resultsDir, { recursive: true, force: true });
  mkdirSync(resultsDir, { recursive: true, mode: 0o700 }); // the server refuses a results directory others can read
  const { child, url } = await startServer(resultsDir, models);
  try {
    await waitReady(url);
    const pid = child.pid!;
    const small = readFileSync(join(INPUTS, SMALL_EDIT.input));
    const edit = multipart(
      { operations: JSON.stringify(SMALL_EDIT.operations), format: SMALL_EDIT.format, quality: String(SMALL_EDIT.quality), output: 'raw' },
      { name: 'input', filename: 'small.jpg', type: 'image/jpeg', data: small },
    );
    const lenna = readFileSync(join(INPUTS, INPUT_FILES.lenna));
    const bg = multipart({ output: 'raw', format: 'png' }, { name: 'input', filename: 'lenna.png', type: 'image/png', data: lenna });

    // One request checked by hand: the bench must measure successes, not fast errors.
    const res = await fetch(`${url}/images/edit`, { method: 'POST', headers: { 'content-type': edit.contentType, 'x-api-key': API_KEY }, body: edit.body });
    await res.arrayBuffer();
    const check = { status: res.status, contentType: res.headers.get('content-type'), width: res.headers.get('x-image-width'), height: res.headers.get('x-image-height') };
    if (res.status !== 200) throw new Error(`the check request got ${res.status}`);

    await load('warm-up', pid, url, '/images/edit', edit, 4, plan.warmup);
    const afterWarmup = treeRssMB(pid);
    const runs: LoadResult[] = [];
    const [r1, r4, r16] = plan.raw;
    for (const [connections, amount] of [[1, r1], [4, r4], [16, r16]] as const) {
      const r = await load(`edit raw, c=${connections}`, pid, url, '/images/edit', edit, connections, amount);
      log(`  ${r.name}: ${r.perSecond.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, errors ${r.errors}, 503 ${r.overloaded}`);
      runs.push(r);
    }
    const afterRawRequests = treeRssMB(pid);
    for (const [connections, amount] of [[1, plan.bg[0]], [4, plan.bg[1]]] as const) {
      const r = await load(`remove-background ${models[0]}, c=${connections}`, pid, url, '/images/remove-background', bg, connections, amount);
      log(`  ${r.name}: ${r.perSecond.toFixed(1)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, errors ${r.errors}, 503 ${r.overloaded}`);
      runs.push(r);
    }
    for (const model of models.slice(1)) {
      const other = multipart({ output: 'raw', format: 'png', model }, { name: 'input', filename: 'lenna.png', type: 'image/png', data: lenna });
      await load(`warm-up ${model}`, pid, url, '/images/remove-background', other, 1, 1);
      const r = await load(`remove-background ${model}, c=1`, pid, url, '/images/remove-background', other, 1, plan.bgOtherModels);
      log(`  ${r.name}: ${r.perSecond.toFixed(2)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, errors ${r.errors}, 503 ${r.overloaded}`);
      runs.push(r);
    }
    const afterAll = treeRssMB(pid);
    const shareAB = await compareFixedShare(plan.shareAB, models[0]!, resultsDir, bg, runs, log);
    return {
      server: { url },
      check,
      runs,
      rssMB: { afterWarmup, afterRawRequests, afterAll, rawRequests: r1 + r4 + r16 },
      rssGrowthMB: afterRawRequests - afterWarmup,
      shareAB,
    };
  } finally {
    await stopServer(child);
    rmSync(resultsDir, { recursive: true, force: true });
  }
}

/** Alternated rounds of the fixed-share A/B. */
const SHARE_AB_ROUNDS = 3;

/**
 * The A/B of HttpPlan.shareAB: two fresh servers with the same model and warm-up, one as configured
 * (a lone job may use every core) and one with a fixed share per job, loaded in turn at c=4 for
 * SHARE_AB_ROUNDS rounds, the order swapped each round so that a drift of the machine lands on
 * both arms. (Until the sixth wave the configured arm was the bench's own server, which by then
 * also held IS-Net and had served thousands of requests: not like for like.)
 */
async function compareFixedShare(
  amount: number,
  model: string,
  resultsDir: string,
  bg: { body: Buffer; contentType: string },
  runs: LoadResult[],
  log: (line: string) => void,
): Promise<ShareAB> {
  // Both servers run at the default MATTE_CONCURRENCY, the number of cores: a fixed share is then
  // floor(cores / cores) = one thread a job.
  const jobThreads = 1;
  const servers: Array<{ arm: 'shared' | 'fixed'; label: string; child: ChildProcess; url: string }> = [];
  try {
    for (const [arm, env, label] of [
      ['shared', {}, 'every core when alone'],
      ['fixed', { MATTE_JOB_THREADS: String(jobThreads) }, `MATTE_JOB_THREADS=${jobThreads}`],
    ] as const) {
      const { child, url } = await startServer(join(resultsDir, `share-${arm}`), [model], env);
      servers.push({ arm, label, child, url });
      await waitReady(url);
      await load(`warm-up ${label}`, child.pid!, url, '/images/remove-background', bg, 4, 8);
    }
    const arms = { shared: [] as LoadResult[], fixed: [] as LoadResult[] };
    for (let round = 1; round <= SHARE_AB_ROUNDS; round++) {
      const order = round % 2 === 1 ? servers : [...servers].reverse();
      for (const server of order) {
        const r = await load(`remove-background ${model}, c=4, ${server.label}, round ${round}`, server.child.pid!, server.url, '/images/remove-background', bg, 4, amount);
        log(`  ${r.name}: ${r.perSecond.toFixed(2)} req/s, server CPU ${r.serverCpuMsPerRequest.toFixed(0)} ms a request, errors ${r.errors}`);
        runs.push(r);
        arms[server.arm].push(r);
      }
    }
    const rate = (rs: LoadResult[]) => rs.reduce((n, r) => n + r.requests, 0) / rs.reduce((n, r) => n + r.seconds, 0);
    const cpu = (rs: LoadResult[]) => rs.reduce((n, r) => n + r.serverCpuMsPerRequest * r.requests, 0) / rs.reduce((n, r) => n + r.requests, 0);
    return { jobThreads, rounds: SHARE_AB_ROUNDS, shared: rate(arms.shared), fixed: rate(arms.fixed), sharedCpuMs: cpu(arms.shared), fixedCpuMs: cpu(arms.fixed) };
  } finally {
    for (const server of servers) await stopServer(server.child);
  }
}

export async function stopServer(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  await new Promise((r) => {
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      r(undefined);
    }, 10_000);
    child.once('exit', () => {
      clearTimeout(t);
      r(undefined);
    });
  });
}
