// Starting the real server for tests: in this process on a free loopback port (startTestServer),
// or as a child process running dist/server/main.js (spawnServer, for SIGTERM and restarts).
// Every address used is loopback; nothing here talks to another host.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { startServer, type RunningServer } from '../../server/app.js';
import { loadConfig, type Config } from '../../server/config.js';
import { instrumentationEnv } from './uninstrumented-env.js';
import { waitFor } from './wait.js';

export const TEST_KEY = 'test-key-0123456789abcdef';
const root = fileURLToPath(new URL('../../../', import.meta.url));

export async function tempDir(prefix = 'matte-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export interface TestServer {
  url: string;
  port: number;
  config: Config;
  running: RunningServer;
  resultsDir: string;
  close(): Promise<void>;
}

/** Starts the app in this process on 127.0.0.1 with a fresh results directory. */
export async function startTestServer(env: Record<string, string> = {}, options: { isAllowedAddress?: (address: string) => boolean; logger?: Logger } = {}): Promise<TestServer> {
  const resultsDir = env.MATTE_RESULTS_DIR ?? (await tempDir('matte-results-'));
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    MATTE_API_KEYS: TEST_KEY,
    MATTE_LOG_LEVEL: 'silent',
    MATTE_RESULTS_DIR: resultsDir,
    // Off unless a test asks (port 0 then): servers in parallel must not share 127.0.0.1:9464.
    MATTE_METRICS_ADDRESS: 'off',
    ...env,
  });
  const running = await startServer({ config, isAllowedAddress: options.isAllowedAddress, logger: options.logger });
  const port = (running.server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    config,
    running,
    resultsDir,
    async close() {
      await running.close();
      if (!env.MATTE_RESULTS_DIR) await rm(resultsDir, { recursive: true, force: true });
    },
  };
}

/** The text of /metrics from the server's metrics listener (start it with MATTE_METRICS_ADDRESS '127.0.0.1:0'). */
export async function scrapeMetrics(server: TestServer): Promise<string> {
  const listener = server.running.metrics;
  if (!listener) throw new Error("scrapeMetrics: start the server with MATTE_METRICS_ADDRESS: '127.0.0.1:0'");
  return (await get(listener.url, '/metrics')).body.toString();
}

export interface Fields {
  [name: string]: string | Buffer | { data: Buffer; filename?: string; type?: string };
}

export function form(fields: Fields): FormData {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string') data.append(name, value);
    else if (Buffer.isBuffer(value)) data.append(name, new Blob([new Uint8Array(value)]), 'image.bin');
    else data.append(name, new Blob([new Uint8Array(value.data)], { type: value.type ?? 'application/octet-stream' }), value.filename ?? 'image.bin');
  }
  return data;
}

export interface Reply {
  status: number;
  headers: Headers;
  body: Buffer;
  json(): any;
}

async function reply(res: Response): Promise<Reply> {
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, body, json: () => JSON.parse(body.toString('utf8')) };
}

/** POSTs a multipart form with the test key (or `key`; null sends none). */
export async function post(base: string, path: string, fields: Fields, options: { key?: string | null; headers?: Record<string, string> } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? TEST_KEY : options.key;
  if (key !== null) headers['X-Api-Key'] = key;
  return reply(await fetch(base + path, { method: 'POST', body: form(fields), headers }));
}

export async function get(base: string, path: string, init: RequestInit = {}): Promise<Reply> {
  return reply(await fetch(base + path, init));
}

/** Sends raw bytes on a fresh connection and collects what comes back until the server closes or `waitMs`. */
export function rawRequest(port: number, chunks: Array<string | Buffer>, options: { waitMs?: number; host?: string } = {}): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, options.host ?? '127.0.0.1');
    let text = '';
    let closed = false;
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      closed = true;
      clearTimeout(timer);
      resolve({ text, closed });
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed });
    }, options.waitMs ?? 3000);
    socket.on('connect', () => {
      for (const c of chunks) socket.write(c);
    });
    socket.on('timeout', reject);
  });
}

export function statusOf(rawText: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(rawText)?.[1] ?? 0);
}

/** The JSON body of a raw (non-chunked) HTTP response text. */
export function bodyOf(rawText: string): any {
  const at = rawText.indexOf('\r\n\r\n');
  return JSON.parse(rawText.slice(at + 4));
}

export interface ChildServer {
  url: string;
  child: ChildProcess;
  output(): string;
  /** Sends a signal and waits for the exit; resolves to the exit code (or the signal's name). */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
  exited: Promise<number | string>;
}

/**
 * The environment of a server started as a process: only PATH, HOME and the given settings, so that
 * nothing of the developer's MATTE_* leaks in, plus what the test run instruments matte with.
 */
export function serverProcessEnv(settings: Record<string, string>): Record<string, string> {
  return { ...instrumentationEnv(), PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...settings };
}

/** Runs `node [nodeArgs] dist/server/main.js` with the given environment and waits for its "listening" line. */
export function spawnServer(env: Record<string, string>, options: { timeoutMs?: number; nodeArgs?: string[] } = {}): Promise<ChildServer> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), join(root, 'dist/server/main.js')], {
    cwd: root,
    env: serverProcessEnv({ PORT: '0', HOST: '127.0.0.1', MATTE_LOG_LEVEL: 'warn', MATTE_METRICS_ADDRESS: 'off', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  // 'close', not 'exit': by then both pipes are read to the end, so output() holds the last words.
  const exited = new Promise<number | string>((resolve) => child.on('close', (code, signal) => resolve(code ?? signal ?? -1)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start:\n${output}`));
    }, options.timeoutMs ?? 20_000);
    const check = () => {
      const match = /matte: listening on (http:\/\/\S+)/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', check);
      resolve({
        url: match[1]!,
        child,
        output: () => output,
        exited,
        stop(signal: NodeJS.Signals = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    };
    child.stdout!.on('data', check);
    exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`server exited before listening:\n${output}`));
    });
  });
}

/** A pause that paces a client (a trickled upload, a slow job); to wait for a state, use waitFor (wait.ts). */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls /readyz until the job limiter shows at least `running` running and `waiting` waiting jobs. */
export async function waitForJobs(base: string, running: number, waiting = 0, timeoutMs = 10_000): Promise<void> {
  await waitFor(
    `jobs to reach running=${running} waiting=${waiting}`,
    async () => {
      const jobs = ((await (await fetch(`${base}/readyz`)).json()) as { jobs?: { running: number; waiting: number } }).jobs;
      return jobs && jobs.running >= running && jobs.waiting >= waiting;
    },
    { timeoutMs },
  );
}
