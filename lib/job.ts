// A job's life in the library: its time budget and cancellation, and how jobs share the cores.
//
// Budget: a `timeout` in seconds (default 30) and an AbortSignal (`signal`). Both stop the job
// inside the addon (native/budget.h): inside libvips within a tile, inside ONNX Runtime within an
// operator; the job's memory is released as it unwinds. Past the timeout the job rejects with
// MatteError `job_timeout`; an aborted signal rejects it with MatteError `aborted` (its `cause` is
// the signal's reason).
//
// Cores (docs/api.md, "Capacity and shutdown"): a job that runs alone may use every core, jobs
// that run together share them.
// - ONNX Runtime: one process-wide intra-op pool (native/matte/model.cc), sized once, before the
//   first model loads; inferences take turns in it (native/matte/inference_gate.h).
// - libvips: its worker count is global and read when a job's pipeline starts computing, so it is
//   set to floor(cores / jobs running) as jobs start and end.
// `threads` caps both for hosts that keep cores for their own work.
import { availableParallelism } from 'node:os';
import { addon, type NativeJob } from './native.js';
import { MatteError, fromNativeError } from './errors.js';

// ---- the time budget and cancellation --------------------------------------------------------------

/** The library's default time budget of one job, in seconds (the server's MATTE_JOB_TIMEOUT_SECONDS default too). */
export const DEFAULT_JOB_TIMEOUT_SECONDS = 30;
/** The longest budget accepted, in seconds (about 11.5 days: far past any real job). */
export const MAX_JOB_TIMEOUT_SECONDS = 1_000_000;

export interface JobControl {
  /**
   * Seconds the job may run before it is stopped (MatteError `job_timeout`); 0: no limit.
   * Default 30. The clock starts when the job starts running, not while it waits for a thread.
   */
  timeout?: number;
  /** Aborting it stops the job (MatteError `aborted`), also while it waits for a thread. */
  signal?: AbortSignal;
}

/** Checks `timeout` and `signal`; returns the budget in milliseconds (0: none). */
export function jobTimeoutMs(control: JobControl): number {
  const { timeout, signal } = control;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new MatteError('invalid_option', 'signal: must be an AbortSignal', 'signal');
  }
  if (timeout === undefined) return DEFAULT_JOB_TIMEOUT_SECONDS * 1000;
  if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout < 0 || timeout > MAX_JOB_TIMEOUT_SECONDS) {
    throw new MatteError('invalid_option', `timeout: must be a number of seconds from 0 (no limit) to ${MAX_JOB_TIMEOUT_SECONDS}`, 'timeout');
  }
  // At least 1 ms: a positive timeout must never mean "no limit".
  return timeout === 0 ? 0 : Math.max(1, Math.round(timeout * 1000));
}

function abortedError(signal: AbortSignal): MatteError {
  const error = new MatteError('aborted', 'the job was aborted');
  (error as { cause?: unknown }).cause = signal.reason;
  return error;
}

/**
 * `work` (what a job does before its native part: a matte-cache lookup), or the job's `aborted`
 * error as soon as `signal` aborts, already aborted included. The work itself is left to end.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(abortedError(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortedError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Runs one native job that `signal` can stop. `run` receives the job handle to pass to
 * addon.run(). Native errors become MatteErrors.
 */
export async function runCancellable<T>(run: (job: NativeJob) => Promise<T>, signal?: AbortSignal): Promise<T> {
  if (signal?.aborted) throw abortedError(signal);
  const job = addon.createJob();
  const running = run(job);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      // A running job stops within a tile or an operator and rejects by itself (so its memory is
      // freed before the caller moves on); one still waiting for a thread will not run at all.
      if (!addon.cancel(job)) reject(abortedError(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([running, aborted]);
  } catch (err) {
    const error = fromNativeError(err);
    if (error.code === 'aborted' && signal && error.cause === undefined) (error as { cause?: unknown }).cause = signal.reason;
    throw error;
  } finally {
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    running.catch(() => {}); // a job rejected by the signal first still settles later
  }
}

// ---- how jobs share the cores -----------------------------------------------------------------------

export interface ThreadOptions {
  /** Jobs the caller runs at once (the server: MATTE_CONCURRENCY); sets the threadsPerJob reported. */
  concurrency?: number;
  /** At most this many threads for one job, in libvips and in ONNX Runtime. Default: every core. */
  threads?: number;
}

interface Sharing {
  cores: number;
  cap: number;
  concurrency: number;
}

let sharing: Sharing | undefined;
let running = 0;

function share(s: Sharing, jobs: number): number {
  return Math.max(1, Math.min(s.cap, Math.floor(s.cores / Math.max(1, jobs))));
}

/**
 * Sets how matte shares the cores. Call it before the first job (the server does); ONNX Runtime's
 * pool size is fixed when the first model loads. Returns the threads each job gets when
 * `concurrency` jobs run together; a job running alone gets up to `threads` (default every core).
 */
export function configure(options: ThreadOptions = {}): { threadsPerJob: number } {
  const cores = availableParallelism();
  const s: Sharing = {
    cores,
    cap: Math.max(1, Math.min(cores, options.threads ?? cores)),
    concurrency: Math.max(1, options.concurrency ?? 1),
  };
  sharing = s;
  addon.configure({ vipsThreads: share(s, running), onnxThreads: s.cap });
  return { threadsPerJob: share(s, s.concurrency) };
}

/** Threads one job gets when the configured number of jobs run together. */
export function threadsPerJob(): number {
  return sharing ? share(sharing, sharing.concurrency) : configure().threadsPerJob;
}

/** Runs one job, with libvips' worker count following the number of jobs running. */
export async function withCores<T>(job: () => Promise<T>): Promise<T> {
  const s = sharing ?? (configure(), sharing!);
  running++;
  addon.configure({ vipsThreads: share(s, running) });
  try {
    return await job();
  } finally {
    running--;
    addon.configure({ vipsThreads: share(s, running) });
  }
}
