// The remove.bg-compatible route's cost (issue 35): the same work, lenna.png cut out and encoded as
// PNG by the first model, through POST /v1.0/removebg (multipart image_file, size=full, format=png)
// and through POST /images/remove-background (output=raw, format=png), on one server, one
// connection, in many short alternated rounds so that a drift of the machine (a shared one most of
// all) lands on both routes; the server's CPU time a request is reported beside the wall time.
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { INPUTS, OUT } from './common.js';
import { API_KEY, load, multipart, startServer, stopServer, waitReady, type LoadResult } from './http.js';
import { INPUT_FILES } from './pipelines.js';

export const REMOVEBG_ROUNDS = 20;

export interface RemoveBgRouteResults {
  model: string;
  rounds: number;
  requestsPerArm: number;
  runs: LoadResult[];
  /** Milliseconds a request over all rounds (one connection: the time of one request). */
  matteMs: number;
  removeBgMs: number;
  /** removeBgMs / matteMs: the route's cost over the same work (target <= 1.05). */
  ratio: number;
  /** The server's CPU milliseconds a request, and their ratio. */
  matteCpuMs: number;
  removeBgCpuMs: number;
  cpuRatio: number;
}

export async function runRemoveBgRoute(requestsPerRound: number, model: string, log: (line: string) => void): Promise<RemoveBgRouteResults> {
  const resultsDir = join(OUT, 'server-results-removebg');
  rmSync(resultsDir, { recursive: true, force: true });
  mkdirSync(resultsDir, { recursive: true, mode: 0o700 });
  const { child, url } = await startServer(resultsDir, [model]);
  try {
    await waitReady(url);
    const pid = child.pid!;
    const lenna = readFileSync(join(INPUTS, INPUT_FILES.lenna));
    const arms = [
      { name: 'POST /images/remove-background', path: '/images/remove-background', body: multipart({ output: 'raw', format: 'png' }, { name: 'input', filename: 'lenna.png', type: 'image/png', data: lenna }) },
      { name: 'POST /v1.0/removebg', path: '/v1.0/removebg', body: multipart({ size: 'full', format: 'png' }, { name: 'image_file', filename: 'lenna.png', type: 'image/png', data: lenna }) },
    ];
    for (const arm of arms) {
      // One request checked by hand: the runs must time cut-outs, not fast errors.
      const res = await fetch(`${url}${arm.path}`, { method: 'POST', headers: { 'content-type': arm.body.contentType, 'x-api-key': API_KEY }, body: arm.body.body });
      const type = res.headers.get('content-type');
      await res.arrayBuffer();
      if (res.status !== 200 || type !== 'image/png') throw new Error(`${arm.name}: the check request got ${res.status} ${type}`);
      await load(`warm-up ${arm.name}`, pid, url, arm.path, arm.body, 1, 8);
    }
    const runs: LoadResult[] = [];
    const byArm = new Map<string, LoadResult[]>(arms.map((a) => [a.name, []]));
    for (let round = 1; round <= REMOVEBG_ROUNDS; round++) {
      for (const arm of round % 2 === 1 ? arms : [...arms].reverse()) {
        const r = await load(`${arm.name} ${model}, c=1, round ${round}`, pid, url, arm.path, arm.body, 1, requestsPerRound);
        if (round === 1 || round === REMOVEBG_ROUNDS) log(`  ${r.name}: ${(1000 / r.perSecond).toFixed(1)} ms a request, server CPU ${r.serverCpuMsPerRequest.toFixed(0)} ms, errors ${r.errors}`);
        runs.push(r);
        byArm.get(arm.name)!.push(r);
      }
    }
    const msPerRequest = (rs: LoadResult[]) => (1000 * rs.reduce((n, r) => n + r.seconds, 0)) / rs.reduce((n, r) => n + r.requests, 0);
    const cpuPerRequest = (rs: LoadResult[]) => rs.reduce((n, r) => n + r.serverCpuMsPerRequest * r.requests, 0) / rs.reduce((n, r) => n + r.requests, 0);
    const [matte, removeBg] = [byArm.get(arms[0]!.name)!, byArm.get(arms[1]!.name)!];
    const matteMs = msPerRequest(matte);
    const removeBgMs = msPerRequest(removeBg);
    const matteCpuMs = cpuPerRequest(matte);
    const removeBgCpuMs = cpuPerRequest(removeBg);
    return {
      model,
      rounds: REMOVEBG_ROUNDS,
      requestsPerArm: requestsPerRound * REMOVEBG_ROUNDS,
      runs,
      matteMs,
      removeBgMs,
      ratio: removeBgMs / matteMs,
      matteCpuMs,
      removeBgCpuMs,
      cpuRatio: removeBgCpuMs / matteCpuMs,
    };
  } finally {
    await stopServer(child);
    rmSync(resultsDir, { recursive: true, force: true });
  }
}
