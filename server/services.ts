// What the routes share: the configuration, the result store, the job limiter, the model state,
// the logger and the URL-fetch options. Built once by app.ts.
import type { Logger } from 'pino';
import { loadModel, modelRegistry, MatteError, type Limits } from '../lib/index.js';
import type { Config } from './config.js';
import type { JobLimiter, RunningJobs } from './jobs.js';
import type { Metrics } from './metrics.js';
import type { ResultStore } from './store/index.js';
import type { FetchOptions } from './input/fetch.js';
import type { ServerMatteCache } from './matte-cache.js';
import type { ResultCache } from './result-cache.js';

export interface Services {
  config: Config;
  store: ResultStore;
  limiter: JobLimiter;
  /** Every admitted job's AbortController (client gone, shutdown). */
  jobs: RunningJobs;
  model: ModelState;
  logger: Logger;
  metrics: Metrics;
  fetch: FetchOptions;
  limits: Limits;
  /** The matte computed once (MATTE_MATTE_CACHE_*); undefined when off. */
  matteCache?: ServerMatteCache;
  /** GET image URLs' answers kept in the store (MATTE_RESULT_CACHE_*); undefined when off. */
  resultCache?: ResultCache;
  /** Set once SIGTERM (or close()) started the shutdown. */
  shuttingDown: boolean;
}

/** The background-removal models: loaded at start-up (MATTE_MODELS), shared by every job. */
export class ModelState {
  ready = false;
  /** The models this server serves, the first the default; known once the registry was read. */
  names: string[] = [];
  lastError?: string;
  private loading?: Promise<void>;

  constructor(
    private readonly config: Pick<Config, 'models' | 'customModels' | 'modelsDir'>,
    private readonly logger: Logger,
  ) {}

  /**
   * Loads every configured model unless they are loaded; a failed load is retried by the next
   * call (e.g. once the model was fetched). Throws MatteError model_error while one cannot be loaded.
   */
  ensure(): Promise<void> {
    if (this.ready) return Promise.resolve();
    this.loading ??= (async () => {
      let current: string | undefined;
      try {
        const names = await this.resolveNames();
        // Every job names its model (check()), so the library's default does not matter here.
        for (const name of names) {
          current = name;
          const custom = Object.hasOwn(this.config.customModels, name) ? this.config.customModels[name] : undefined;
          await loadModel(name, { dir: this.config.modelsDir, entry: custom, path: custom?.path });
          this.logger.info({ model: name }, 'model loaded');
        }
        this.ready = true;
        this.lastError = undefined;
      } catch (err) {
        this.lastError = (err as Error).message;
        this.logger.error({ err: { code: (err as MatteError).code, message: this.lastError } }, 'model not loaded');
        // The client gets no file path: the log has the details.
        throw new MatteError('model_error', `background removal is unavailable: the model${current ? ` "${current}"` : ''} could not be loaded (see the server log)`);
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  private async resolveNames(): Promise<string[]> {
    if (!this.names.length) this.names = this.config.models ?? [(await modelRegistry()).default];
    return this.names;
  }

  /**
   * The model a request asked for, checked against the ones this server loads (undefined: the
   * default, the first). Throws 400 invalid_field (path `model`) or invalid_operations (the op's path).
   */
  async check(name: string | undefined, path = 'model'): Promise<string> {
    await this.resolveNames();
    const chosen = name ?? this.names[0]!;
    if (!this.names.includes(chosen)) {
      const code = path === 'model' ? 'invalid_field' : 'invalid_operations';
      throw new MatteError(code, `${path} must be one of the loaded models: ${this.names.join(', ')} (got "${chosen}")`, path);
    }
    return chosen;
  }
}
