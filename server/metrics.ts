// GET /metrics: Prometheus metrics (prom-client, docs/api.md, "Metrics"). One registry per app, so
// several apps in one process (the tests) do not share counters. Served without a key on a listener
// of its own (MATTE_METRICS_ADDRESS, server/metrics-listener.ts); on the public port only when
// MATTE_METRICS_KEY is set, with that key (Authorization: Bearer KEY, or X-Api-Key: KEY).
//
//   matte_http_requests_total{route,method,status}       every response (route: the route's pattern)
//   matte_http_request_duration_seconds{route,method}    request duration histogram
//   matte_http_unavailable_total{code}                   503s: overloaded, not_ready, store_unavailable, model_error
//   matte_jobs_running, matte_jobs_queued                 the job limiter now
//   matte_job_duration_seconds{endpoint}                  image jobs (decode, steps, encode), in a slot (endpoint: the route's pattern)
//   matte_model_job_duration_seconds{model}               jobs that ran the background-removal model
//   matte_results_stored_total{store}, matte_results_stored_bytes_total{store}
//   matte_results_in_store, matte_results_in_store_bytes   held now by the store (all processes; last sweep)
//   matte_result_store_failures_total{store,code}         507 insufficient_storage / 503 store_unavailable
//   matte_url_fetches_total{outcome}                      input URL fetches: ok or the error code
//   matte_signed_requests_total{outcome}                  signed GET URLs: 200, 304, 403 or error (another 4xx/5xx)
//   matte_matte_cache_total{outcome}                      the matte cache: hit, miss, stored, dropped, bad (a corrupt entry)
//   matte_result_cache_total{outcome}                     the result cache of GET image URLs: hit, miss, stored, dropped, bad
//   matte_dialect_requests_total{dialect,outcome}         imgproxy, cloudflare, ipx URLs: 200, 304, 403 or error
//   nodejs_* and process_* (prom-client's default metrics: event-loop lag, heap, GC, CPU, RSS, fds)
import { createHash, timingSafeEqual } from 'node:crypto';
import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { AuthFailures } from './auth-failures.js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { MatteCacheOutcome } from '../lib/index.js';
import type { ResultCacheOutcome } from './result-cache.js';
import { HttpError } from './errors.js';
import type { JobLimiter } from './jobs.js';
import type { ResultStore } from './store/index.js';

interface LabelSet {
  labels: { route: string; method: string };
  byStatus: Map<number, { route: string; method: string; status: string }>;
}

/**
 * The route label of a request: the pattern of the route that took it (e.g. /images/results/:name,
 * /images/signed/*rest), `unmatched` when none did. Never the path: ids, signatures and signed
 * options must not become labels (each would be a series of its own, and /metrics would print them).
 */
export function routeLabel(ctx: Context): string {
  return typeof ctx._matchedRoute === 'string' ? ctx._matchedRoute : 'unmatched';
}

const SIGNED_OUTCOMES = ['200', '304', '403', 'error'] as const;
const MATTE_CACHE_OUTCOMES: readonly MatteCacheOutcome[] = ['hit', 'miss', 'bad', 'stored', 'dropped'];
const RESULT_CACHE_OUTCOMES: readonly ResultCacheOutcome[] = ['hit', 'miss', 'bad', 'stored', 'dropped'];
export const DIALECT_OUTCOMES = ['200', '304', '403', 'error'] as const;

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({ name: 'matte_http_requests_total', help: 'HTTP responses by route pattern, method and status', labelNames: ['route', 'method', 'status'], registers: [this.registry] });
  private readonly requestSeconds = new Histogram({ name: 'matte_http_request_duration_seconds', help: 'HTTP request duration from arrival to the end of the response', labelNames: ['route', 'method'], buckets: DURATION_BUCKETS, registers: [this.registry] });
  private readonly unavailable = new Counter({ name: 'matte_http_unavailable_total', help: '503 responses by error code', labelNames: ['code'], registers: [this.registry] });
  private readonly jobSeconds = new Histogram({ name: 'matte_job_duration_seconds', help: 'Image job duration (decode, operations, encode) once it has a slot, by endpoint', labelNames: ['endpoint'], buckets: DURATION_BUCKETS, registers: [this.registry] });
  private readonly modelJobSeconds = new Histogram({
    name: 'matte_model_job_duration_seconds',
    help: 'Duration of the jobs that ran the background-removal model, by model (the whole job: the addon does not report the inference step alone)',
    labelNames: ['model'],
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  private readonly stored = new Counter({ name: 'matte_results_stored_total', help: 'Results stored (output=url)', labelNames: ['store'], registers: [this.registry] });
  private readonly storedBytes = new Counter({ name: 'matte_results_stored_bytes_total', help: 'Bytes of the results stored', labelNames: ['store'], registers: [this.registry] });
  private readonly storeFailures = new Counter({ name: 'matte_result_store_failures_total', help: 'Results that could not be stored, by error code', labelNames: ['store', 'code'], registers: [this.registry] });
  private readonly urlFetches = new Counter({ name: 'matte_url_fetches_total', help: 'Input URL fetches by outcome (ok or the error code)', labelNames: ['outcome'], registers: [this.registry] });
  private readonly signedRequests = new Counter({ name: 'matte_signed_requests_total', help: 'Signed GET URLs by outcome: 200, 304, 403, or error (any other answer)', labelNames: ['outcome'], registers: [this.registry] });
  private readonly matteCache = new Counter({ name: 'matte_matte_cache_total', help: 'Matte cache lookups and writes by outcome: hit, miss, stored, dropped (not written), bad (an entry that could not be read, recomputed)', labelNames: ['outcome'], registers: [this.registry] });
  private readonly resultCache = new Counter({ name: 'matte_result_cache_total', help: 'Result cache lookups and writes by outcome: hit, miss, stored, dropped (not written), bad (an entry that could not be read)', labelNames: ['outcome'], registers: [this.registry] });
  private readonly dialectRequests = new Counter({ name: 'matte_dialect_requests_total', help: 'imgproxy, Cloudflare and IPX image URLs by dialect and outcome: 200, 304, 403, or error (any other answer)', labelNames: ['dialect', 'outcome'], registers: [this.registry] });

  constructor(limiter: JobLimiter, store: ResultStore) {
    collectDefaultMetrics({ register: this.registry });
    // The fixed outcomes exist from the start, at 0: a rate over them needs no first event.
    for (const outcome of SIGNED_OUTCOMES) this.signedRequests.inc({ outcome }, 0);
    for (const outcome of MATTE_CACHE_OUTCOMES) this.matteCache.inc({ outcome }, 0);
    for (const outcome of RESULT_CACHE_OUTCOMES) this.resultCache.inc({ outcome }, 0);
    new Gauge({ name: 'matte_jobs_running', help: 'Image jobs running now', registers: [this.registry], collect() { this.set(limiter.stats.running); } });
    new Gauge({ name: 'matte_jobs_queued', help: 'Image jobs waiting for a slot now', registers: [this.registry], collect() { this.set(limiter.stats.waiting); } });
    // What the store holds, every process's results together, as its last sweep counted (no metric before the first sweep).
    new Gauge({ name: 'matte_results_in_store', help: 'Unexpired results in the store (all processes), as of the last sweep', labelNames: ['store'], registers: [this.registry], collect() { const u = store.usage(); if (u) this.set({ store: store.kind }, u.results); } });
    new Gauge({ name: 'matte_results_in_store_bytes', help: 'Bytes of the unexpired results in the store (all processes), as of the last sweep', labelNames: ['store'], registers: [this.registry], collect() { const u = store.usage(); if (u) this.set({ store: store.kind }, u.bytes); } });
  }

  /**
   * The label sets of one route and method, made once: a response then allocates no label object.
   * Bounded: routes are the router's patterns (or "unmatched"), methods those Node's parser accepts.
   */
  private readonly labelSets = new Map<string, Map<string, LabelSet>>();

  private labelsOf(route: string, method: string): LabelSet {
    let byMethod = this.labelSets.get(route);
    if (!byMethod) this.labelSets.set(route, (byMethod = new Map()));
    let set = byMethod.get(method);
    if (!set) byMethod.set(method, (set = { labels: { route, method }, byStatus: new Map() }));
    return set;
  }

  /** Middleware: counts and times every request (put first, so that every response is seen). */
  middleware() {
    return async (ctx: Context, next: Next) => {
      const started = process.hrtime.bigint();
      ctx.res.once('close', () => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const route = routeLabel(ctx);
        const set = this.labelsOf(route, ctx.method);
        const status = ctx.status;
        let withStatus = set.byStatus.get(status);
        if (!withStatus) set.byStatus.set(status, (withStatus = { ...set.labels, status: String(status) }));
        this.requestSeconds.observe(set.labels, seconds);
        this.requests.inc(withStatus);
        // The remove.bg route sheds load with its API's 429 (code overloaded): counted here too.
        if (status === 503 || ctx.state.errorCode === 'overloaded') this.unavailable.inc({ code: String(ctx.state.errorCode ?? 'unknown') });
      });
      await next();
    };
  }

  jobDone(endpoint: string, seconds: number, model: string | undefined): void {
    this.jobSeconds.observe({ endpoint }, seconds);
    if (model) this.modelJobSeconds.observe({ model }, seconds);
  }

  resultStored(store: string, bytes: number): void {
    this.stored.inc({ store });
    this.storedBytes.inc({ store }, bytes);
  }

  resultNotStored(store: string, code: string): void {
    this.storeFailures.inc({ store, code });
  }

  urlFetched(outcome: string): void {
    this.urlFetches.inc({ outcome });
  }

  signedRequest(outcome: (typeof SIGNED_OUTCOMES)[number]): void {
    this.signedRequests.inc({ outcome });
  }

  matteCacheEvent(outcome: MatteCacheOutcome): void {
    this.matteCache.inc({ outcome });
  }

  resultCacheEvent(outcome: ResultCacheOutcome): void {
    this.resultCache.inc({ outcome });
  }

  dialectRequest(dialect: string, outcome: (typeof DIALECT_OUTCOMES)[number]): void {
    this.dialectRequests.inc({ dialect, outcome });
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** GET /metrics on the public port, with MATTE_METRICS_KEY only (without it: server/metrics-listener.ts). */
export function metricsRoute(router: Router, metrics: Metrics, key: string, failures?: AuthFailures): void {
  const wanted = digest(key);
  router.get('/metrics', async (ctx) => {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('Authorization'))?.[1];
    const given = bearer ?? ctx.get('X-Api-Key');
    if (!given || !timingSafeEqual(digest(given), wanted)) {
      failures?.wrongKey(ctx.ip, given);
      throw new HttpError(401, 'unauthorized', 'send the metrics key (MATTE_METRICS_KEY) as Authorization: Bearer KEY', { headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' } });
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
}
