// A job's life in the server, from admission to its end (the library's side is lib/job.ts: the
// job's timeout and signal, and how jobs share the cores):
//   shedLoad     admits an image request before its body is read, or refuses it (503 overloaded)
//   JobLimiter   the admission count, the job slots and their queue
//   RunningJobs  every admitted job's AbortController, aborted when its client goes away (the job
//                stops inside the addon and frees its slot) or when the shutdown timeout is reached
//                (every job, queued or running, is stopped); the abort reason is the HttpError the
//                request ends with
//   runJob       one job through all of them, with its time budget
import type { Context, Next } from 'koa';
import { MatteError, type JobControl, type Result } from '../lib/index.js';
import type { Config } from './config.js';
import { HttpError } from './errors.js';
import { routeLabel } from './metrics.js';

export function clientClosed(): HttpError {
  return new HttpError(400, 'client_closed', 'the client went away before the job finished');
}

export function shuttingDown(): HttpError {
  return new HttpError(503, 'shutting_down', 'the server is shutting down and stopped the job; retry', {
    headers: { 'Retry-After': '5' },
    closeConnection: true,
  });
}

export class RunningJobs {
  private readonly controllers = new Set<AbortController>();

  get size(): number {
    return this.controllers.size;
  }

  /**
   * A controller for the request's job, aborted (client_closed) when the client goes away before
   * the response is sent. Call the returned `done` when the job is over.
   */
  open(ctx: Context): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    const onClose = () => {
      if (!ctx.res.writableFinished) controller.abort(clientClosed());
    };
    ctx.res.once('close', onClose);
    this.controllers.add(controller);
    return {
      signal: controller.signal,
      done: () => {
        ctx.res.off('close', onClose);
        this.controllers.delete(controller);
      },
    };
  }

  /** Stops every job, queued or running (shutdown). */
  abortAll(reason: HttpError = shuttingDown()): void {
    for (const controller of this.controllers) controller.abort(reason);
  }
}

/** Seconds a refused client is asked to wait. */
export const RETRY_AFTER_SECONDS = 2;

export function overloaded(): HttpError {
  return new HttpError(503, 'overloaded', 'the server is busy; retry later', {
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    closeConnection: true,
  });
}

/**
 * Admission and job slots. A request is admitted when it arrives (before its body is read) while
 * fewer than `concurrency + queueLimit` requests are admitted, so at most that many uploads are
 * held in memory at once; beyond it, 503 overloaded. An admitted request runs its job in one of
 * `concurrency` slots, the others waiting in arrival order (at most `queueLimit` of them, since
 * admission bounds them). A waiter whose request goes away leaves the queue.
 */
export class JobLimiter {
  private running = 0;
  private admitted = 0;
  private readonly waiting: Array<{ grant: () => void }> = [];

  constructor(
    readonly concurrency: number,
    readonly queueLimit: number,
  ) {}

  get stats(): { admitted: number; running: number; waiting: number } {
    return { admitted: this.admitted, running: this.running, waiting: this.waiting.length };
  }

  /** Whether a new request would be refused now. */
  full(): boolean {
    return this.admitted >= this.concurrency + this.queueLimit;
  }

  /** Admits a request (throws 503 overloaded when full); returns the function that ends it. */
  admit(): () => void {
    if (this.full()) throw overloaded();
    this.admitted++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.admitted--;
    };
  }

  /** Waits for a slot; resolves to its release function. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (this.running < this.concurrency) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    if (this.waiting.length >= this.queueLimit) return Promise.reject(overloaded());
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.releaser());
        },
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        // The abort's reason, when it is the answer (client_closed, shutting_down: RunningJobs).
        reject(signal?.reason instanceof HttpError ? signal.reason : new HttpError(400, 'client_closed', 'the client went away while the job was queued'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next.grant(); // the slot passes straight to the next waiter
      else this.running--;
    };
  }

  /** Runs `job` in a slot. */
  async run<T>(job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await job();
    } finally {
      release();
    }
  }
}

/**
 * Admits an image request before its body is read, or refuses it with 503 when full. Every answer
 * (raw bytes, or JSON that carries an image) keeps its admission until its bytes are sent or its
 * connection is gone: a client that does not read cannot make the server hold more answers than
 * it admits.
 */
export function shedLoad(limiter: JobLimiter) {
  return async (ctx: Context, next: Next) => {
    const done = limiter.admit();
    try {
      await next();
    } catch (err) {
      done();
      throw err;
    }
    const res = ctx.res;
    if (ctx.body != null && !res.destroyed && !ctx.req.socket?.destroyed) res.once('close', done);
    else done();
  };
}

/** What a job needs of the server's services (server/services.ts). */
export interface JobServices {
  config: Pick<Config, 'jobTimeoutMs'>;
  limiter: JobLimiter;
  jobs: RunningJobs;
  metrics: { jobDone(endpoint: string, seconds: number, model: string | undefined): void };
}

/** Whether the client's connection is already gone (its 'close' may have fired before we listened). */
export function clientLeft(ctx: Context): boolean {
  return !ctx.req.socket || ctx.req.socket.destroyed;
}

/**
 * Runs an image job within the limiter (at most MATTE_CONCURRENCY at once, a bounded queue), with
 * the job's time budget (MATTE_JOB_TIMEOUT_SECONDS) and a signal that stops it, queued or running,
 * when the client goes away or the shutdown timeout is reached (RunningJobs). A client that left
 * while its URL was fetched or the model loaded gets no job: it never queues.
 */
export async function runJob<T = Result>(ctx: Context, services: JobServices, job: (control: JobControl) => Promise<T>): Promise<T> {
  if (clientLeft(ctx)) throw new HttpError(400, 'client_closed', 'the client went away before the job started');
  const { signal, done } = services.jobs.open(ctx);
  try {
    return await services.limiter.run(async () => {
      const started = process.hrtime.bigint();
      try {
        return await job({ timeout: services.config.jobTimeoutMs / 1000, signal });
      } finally {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9; // in its slot: queueing excluded
        services.metrics.jobDone(routeLabel(ctx), seconds, ctx.state.model as string | undefined);
      }
    }, signal);
  } catch (err) {
    // Stopped by its signal: the request ends as the abort's reason says (client_closed, shutting_down).
    if (err instanceof MatteError && err.code === 'aborted' && signal.reason instanceof HttpError) throw signal.reason;
    throw err;
  } finally {
    done();
  }
}
