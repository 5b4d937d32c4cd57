// The server's hold on every image job it has admitted to the limiter: each job gets an
// AbortController, aborted when its client goes away (the job stops inside the addon and frees
// its slot) or when the shutdown timeout is reached (every job, queued or running, is stopped).
// The abort reason is the HttpError the request ends with.
import type { Context } from 'koa';
import { HttpError } from './errors.js';

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
