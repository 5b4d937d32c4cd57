// What the routes share: the configuration, the result store, the job limiter, the model state,
// the logger and the URL-fetch options. Built once by app.ts.
import type { Logger } from 'pino';
import { loadModel, MatteError, type Limits } from '../lib/index.js';
import type { Config } from './config.js';
import type { RunningJobs } from './jobs.js';
import type { JobLimiter } from './middleware.js';
import type { ResultStore } from './store/index.js';
import type { FetchOptions } from './input.js';

export interface Services {
  config: Config;
  store: ResultStore;
  limiter: JobLimiter;
  /** Every admitted job's AbortController (client gone, shutdown). */
  jobs: RunningJobs;
  model: ModelState;
  logger: Logger;
  fetch: FetchOptions;
  limits: Limits;
  /** Set once SIGTERM (or close()) started the shutdown. */
  shuttingDown: boolean;
}

/** The background-removal model: loaded at start-up, shared by every job. */
export class ModelState {
  ready = false;
  name?: string;
  lastError?: string;
  private loading?: Promise<void>;

  constructor(
    private readonly config: Pick<Config, 'model' | 'modelsDir'>,
    /** ONNX Runtime intra-op threads per job. */
    private readonly threads: number,
    private readonly logger: Logger,
  ) {}

  /**
   * Loads the model unless it is loaded; a failed load is retried by the next call (e.g. once
   * the model was fetched). Throws MatteError model_error while it cannot be loaded.
   */
  ensure(): Promise<void> {
    if (this.ready) return Promise.resolve();
    this.loading ??= (async () => {
      try {
        const loaded = await loadModel(this.config.model, { threads: this.threads, dir: this.config.modelsDir });
        this.name = loaded.name;
        this.ready = true;
        this.lastError = undefined;
        this.logger.info({ model: loaded.name }, 'model loaded');
      } catch (err) {
        this.lastError = (err as Error).message;
        this.logger.error({ err: { code: (err as MatteError).code, message: this.lastError } }, 'model not loaded');
        // The client gets no file path: the log has the details.
        throw new MatteError('model_error', `background removal is unavailable: the model${this.config.model ? ` "${this.config.model}"` : ''} could not be loaded (see the server log)`);
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }
}
