// What an attack on a server process costs it, as the tests of hostile requests measure it: the
// process's peak memory since a mark (VmHWM after writing 5 to /proc/PID/clear_refs), how long
// /healthz took while the attack ran, and requests whose body is sent as fast as the server takes
// it, counting the bytes it took before it answered. Loopback only.
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { Worker } from 'node:worker_threads';

/** Resets the process's peak resident memory (VmHWM) to its current one. */
export function markPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** The process's resident memory now and its peak since markPeak, in MiB. */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: kb('VmRSS') / 1024, peakMiB: kb('VmHWM') / 1024 };
}

// The poller runs on its own thread: the test's own work (writing the attack's bodies) never
// delays it, so what it measures is the server's answer time.
const POLLER = `
const { parentPort, workerData } = require('node:worker_threads');
let running = true, maxMs = 0, polls = 0;
parentPort.on('message', () => { running = false; });
(async () => {
  while (running) {
    const started = performance.now();
    await fetch(workerData + '/healthz').then((r) => r.arrayBuffer());
    maxMs = Math.max(maxMs, performance.now() - started);
    polls++;
    await new Promise((r) => setTimeout(r, 10));
  }
  parentPort.postMessage({ maxMs, polls });
})();
`;

/** Polls GET /healthz back to back (from a thread of its own) until stopped; the longest answer time in ms. */
export function watchHealth(base: string): { stop(): Promise<{ maxMs: number; polls: number }> } {
  const worker = new Worker(POLLER, { eval: true, workerData: base });
  const result = new Promise<{ maxMs: number; polls: number }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    async stop() {
      worker.postMessage('stop');
      const figures = await result;
      await worker.terminate();
      return figures;
    },
  };
}

export interface Streamed {
  status: number;
  body: Buffer;
  json(): any;
  /** Body bytes the server took (written and not refused by back-pressure) before its answer began. */
  bytesBeforeAnswer: number;
  /** Milliseconds from the first byte sent to the answer's status line. */
  answeredMs: number;
}

/** How long a held body waits for the answer before the rest is sent. */
const HOLD_MS = 10_000;

/**
 * POSTs a body of `total` bytes made by `chunk(offset)` (pieces of any size), written as fast as
 * the server reads it and stopped once the answer arrives. `declare`: send Content-Length (else
 * chunked). `holdAfter`: stop after that many bytes and wait for the answer (HOLD_MS at most, then
 * go on): a server that refuses a body as it meets the fault answers while the rest is unsent,
 * one that reads it whole waits. Bytes sent at full speed say less: once answered the server
 * drains the rest, and loopback's buffers hold many megabytes a client can fill before it reads.
 */
export function streamBody(url: string, headers: Record<string, string>, total: number, chunk: (offset: number) => Buffer, options: { declare?: boolean; holdAfter?: number } = {}): Promise<Streamed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let sent = 0;
    let answered = false;
    let bytesBeforeAnswer = 0;
    const req = http.request(url, { method: 'POST', headers: { ...headers, ...(options.declare === false ? {} : { 'Content-Length': String(total) }) } });
    let held = false;
    const pump = () => {
      while (!answered && sent < total) {
        if (!held && options.holdAfter !== undefined && sent >= options.holdAfter) {
          held = true;
          setTimeout(pump, HOLD_MS).unref();
          return;
        }
        let piece = chunk(sent);
        const upTo = !held && options.holdAfter !== undefined ? Math.min(total, options.holdAfter) : total;
        if (piece.length > upTo - sent) piece = piece.subarray(0, upTo - sent);
        sent += piece.length;
        if (!req.write(piece)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    req.on('response', (res) => {
      answered = true;
      bytesBeforeAnswer = sent - (req.writableLength ?? 0);
      const answeredMs = performance.now() - started;
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => {
        const body = Buffer.concat(parts);
        resolve({ status: res.statusCode ?? 0, body, json: () => JSON.parse(body.toString('utf8')), bytesBeforeAnswer, answeredMs });
        req.destroy();
      });
      res.on('error', reject);
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    pump();
  });
}

/** A body made of one repeated piece after a head: head + piece + piece + ... (+ tail at the end when it fits). */
export function repeated(head: string, piece: string, total: number, tail = ''): (offset: number) => Buffer {
  const block = Buffer.from(piece.repeat(Math.max(1, Math.floor(65536 / piece.length))));
  const headBytes = Buffer.from(head);
  const tailBytes = Buffer.from(tail);
  return (offset) => {
    if (offset === 0 && headBytes.length > 0) return headBytes;
    const left = total - offset;
    if (left <= tailBytes.length) return tailBytes.subarray(tailBytes.length - left);
    return block.subarray(0, Math.min(block.length, left - tailBytes.length));
  };
}
