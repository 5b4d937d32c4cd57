// How matte's jobs share the cores (docs/api.md, "Capacity and shutdown"): a job that runs alone may use every
// core, jobs that run together share them.
// - ONNX Runtime: one process-wide intra-op pool (native/matte/model.cc), sized once, before the
//   first model loads; inferences take turns in it (native/matte/inference_gate.h).
// - libvips: its worker count is global and read when a job's pipeline starts computing, so it is
//   set to floor(cores / jobs running) as jobs start and end.
// `threads` caps both for hosts that keep cores for their own work.
import { availableParallelism } from 'node:os';
import { addon } from './native.js';

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
