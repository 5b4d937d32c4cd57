// Helpers shared by the bench orchestrator and its workers. This module loads neither matte's
// addon nor sharp nor onnxruntime-node: each of those lives in its own child process (two
// libvips, or two libonnxruntime.so.1, in one process crash, and peak RSS must be per tool).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root (bench/common.ts compiles to dist/bench/common.js). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Git-ignored: generated inputs, outputs, results. */
export const OUT = join(ROOT, 'bench', 'out');
export const INPUTS = join(OUT, 'inputs');
export const OUTPUTS = join(OUT, 'outputs');
export const WORKERS = join(ROOT, 'dist', 'bench', 'workers');

export function ensureDirs(): void {
  for (const dir of [OUT, INPUTS, OUTPUTS]) mkdirSync(dir, { recursive: true });
}

export interface Timing {
  /** Milliseconds of each timed run, in order. */
  runs: number[];
  median: number;
  min: number;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summarise(runs: number[]): Timing {
  return { runs, median: median(runs), min: Math.min(...runs) };
}

/** Runs fn `warmup` times untimed, then `runs` times timed; returns the timings in ms. */
export async function time(fn: () => Promise<unknown>, warmup: number, runs: number): Promise<Timing> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return summarise(times);
}

/** Peak and current resident set size of this process, in MB (from /proc/self/status). */
export function memory(): { peakRssMB: number; rssMB: number } {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const kb = (key: string) => Number(status.match(new RegExp(`^${key}:\\s+(\\d+)`, 'm'))?.[1] ?? NaN);
    return { peakRssMB: kb('VmHWM') / 1024, rssMB: kb('VmRSS') / 1024 };
  } catch {
    return { peakRssMB: process.resourceUsage().maxRSS / 1024, rssMB: process.memoryUsage().rss / 1024 / 1024 };
  }
}

/** Arguments of a worker: one JSON object in argv[2]; the result is written to `resultFile`. */
export interface WorkerArgs {
  resultFile: string;
  [key: string]: unknown;
}

export function workerArgs<T extends WorkerArgs>(): T {
  return JSON.parse(process.argv[2] ?? '{}') as T;
}

/** Writes a worker's result and ends the process (so no idle thread pool keeps it alive). */
export function finish(args: WorkerArgs, result: unknown): never {
  writeFileSync(args.resultFile, JSON.stringify(result, null, 2));
  process.exit(0);
}

/** Runs a compiled worker in a child process and returns what it wrote. */
export function runWorker<R>(name: string, args: Record<string, unknown>, options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<R> {
  const resultFile = join(OUT, `.result-${name}-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  const full = { ...args, resultFile };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(WORKERS, `${name}.js`), JSON.stringify(full)], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'pipe'],
      // No worker phones home: onnxruntime-node (the JS peer) carries ONNX Runtime's telemetry too
      // (lib/telemetry.ts); the opt-out does not change the image work.
      env: { ORT_DISABLE_TELEMETRY: '1', ...process.env, ...options.env },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20 * 60_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`worker ${name} exited with ${signal ?? code}: ${stderr.trim().split('\n').slice(-8).join('\n')}`));
        return;
      }
      try {
        resolve(JSON.parse(readFileSync(resultFile, 'utf8')) as R);
      } catch (err) {
        reject(new Error(`worker ${name} wrote no result: ${err}; ${stderr.trim()}`));
      }
    });
  });
}

/** Sampling sizes: --quick for a smoke run under 3 minutes, the default for the figures. */
export interface Budget {
  quick: boolean;
  warmup: number;
  runs: number;
}

/** A small deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
