// Builds the Koa app from a Config (testable without listening) and starts/stops the HTTP server.
//
//   request id + access log -> client address (trusted proxies) -> idle deadline of the response -> shutdown marker -> bounded drain of
//   unread bodies -> JSON errors -> router (image routes: API key (and its failure count) -> load
//   shedding -> form -> job limiter) -> 404 / 405. /metrics without a key listens apart.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa, { type Context, type Middleware } from 'koa';
import { pino, type Logger } from 'pino';
import { configure } from '../lib/index.js';
import { defaultPublicUrl, urlPortAllowed, type Config } from './config.js';
import { errorHandler, HttpError, sendError } from './errors.js';
import { FetchSlots } from './input/fetch.js';
import { EXPECTS_CONTINUE, FORM_OVERHEAD_BYTES } from './input/form.js';
import { corsMiddleware } from './cors.js';
import { Metrics, metricsRoute } from './metrics.js';
import { listenForMetrics, type MetricsListener } from './metrics-listener.js';
import { AuthFailures } from './auth-failures.js';
import { JobLimiter, RunningJobs, shedLoad } from './jobs.js';
import { apiKeyAuth, drainUnreadBody, requestContext } from './middleware.js';
import { clientAddresses } from './client-address.js';
import { idleResponseDeadline } from './response-deadline.js';
import { editRoute } from './routes/edit.js';
import { healthRoutes } from './routes/health.js';
import { openApiRoute } from './routes/openapi.js';
import { removeBackgroundRoute } from './routes/remove-background.js';
import { removeBgRoutes } from './foreign/removebg.js';
import { foreignRoutes } from './foreign/index.js';
import { resultsRoute } from './routes/results.js';
import { signedRoute } from './routes/signed.js';
import { ModelState, type Services } from './services.js';
import { createStore, type ResultStore } from './store/index.js';
import { createMatteCache } from './matte-cache.js';
import { createResultCache } from './result-cache.js';
import { webRoutes } from './web/routes.js';

export interface AppOptions {
  config: Config;
  logger?: Logger;
  store?: ResultStore;
  /**
   * Replaces the address classifier of the URL guard (a test seam: a test may let one loopback
   * address stand in for a public host). Unused when config.allowPrivateUrls is set.
   */
  isAllowedAddress?: (address: string) => boolean;
  /** Called by startServer once it listens, before the model has loaded (main.ts: SIGTERM then). */
  onListening?: (running: RunningServer) => void;
}

export interface MatteApp {
  app: Koa;
  services: Services;
}

/**
 * The server's logger. Lines go to stdout through an asynchronous destination: a synchronous
 * write holds the main thread on every request. Call `flushLogs(logger)` before exiting so that
 * the last lines are not lost.
 */
export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({ level: config.logLevel, base: { service: 'matte' } }, pino.destination({ dest: 1, sync: false }));
}

/** Writes out what the logger still buffers (before process.exit). */
export function flushLogs(logger: Logger): void {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as { flushSync?: () => void } | undefined;
  try {
    stream?.flushSync?.();
  } catch {
    // Not yet open or already closed: nothing left to write.
  }
}

export function createApp(options: AppOptions): MatteApp {
  const { config } = options;
  const logger = options.logger ?? createLogger(config);
  const store = options.store ?? createStore(config, logger);
  const limiter = new JobLimiter(config.concurrency, config.queueLimit);
  // How jobs share the cores (lib/job.ts): set before the first model loads.
  configure({ concurrency: config.concurrency, threads: config.jobThreads });
  const services: Services = {
    config,
    store,
    limiter,
    jobs: new RunningJobs(),
    model: new ModelState(config, logger),
    logger,
    metrics: new Metrics(limiter, store),
    fetch: {
      allowPrivate: config.allowPrivateUrls,
      timeoutMs: config.urlFetchTimeoutMs,
      maxBytes: config.maxInputBytes,
      isAllowed: options.isAllowedAddress,
      dnsServers: config.dnsServers,
      slots: new FetchSlots(config.maxUrlFetches),
      isAllowedPort: (port) => urlPortAllowed(config.urlPorts, port),
    },
    limits: { maxPixels: config.maxInputPixels, maxFrames: config.maxAnimationFrames, maxMatteFrames: config.maxMatteFrames },
    shuttingDown: false,
  };
  services.matteCache = createMatteCache(config, store, services.metrics, logger);
  services.resultCache = createResultCache(config, store, services.metrics, logger);

  const app = new Koa({ proxy: false });
  // A client that goes away while a streamed body (a stored result) is being sent makes Koa's
  // pipeline fail with ERR_STREAM_PREMATURE_CLOSE after the response started: nothing is wrong
  // with the server, so it is not logged as an error (the soak saw it on plain downloads).
  const clientGone = (err: { code?: string }) => ['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE'].includes(err?.code ?? '');
  app.on('error', (err) => (clientGone(err) ? logger.debug({ err }, 'client went away during the response') : logger.error({ err }, 'unhandled error')));

  // Paths match exactly (case and trailing slash): what the access log redacts is what is routed.
  const router = new Router({ sensitive: true, strict: true });
  const authFailures = new AuthFailures(config.authFailuresPerMinute);
  const keyGuard = apiKeyAuth(config.apiKeys, authFailures);
  const imageGuards: Middleware[] = [keyGuard, shedLoad(services.limiter)];
  editRoute(router, services, imageGuards);
  removeBackgroundRoute(router, services, imageGuards);
  if (config.removebgApi) removeBgRoutes(router, services, { key: keyGuard, admit: imageGuards[1]! }); // remove.bg's API (MATTE_REMOVEBG_API)
  signedRoute(router, services, [shedLoad(services.limiter)]); // no API key: the signature is the capability
  // imgproxy's, Cloudflare's and IPX's image URLs (no API key: a signature, or the configured sources).
  const imgproxyAtRoot = foreignRoutes(router, services, [shedLoad(services.limiter)]);
  resultsRoute(router, services);
  healthRoutes(router, services);
  openApiRoute(router, config);
  if (config.metricsKey) metricsRoute(router, services.metrics, config.metricsKey, authFailures); // else on its own listener
  webRoutes(router); // GET / (the playground) and /docs: public pages, see server/web/

  app.use(requestContext(logger));
  app.use(clientAddresses(config.trustedProxies, logger));
  app.use(idleResponseDeadline(config.idleTimeoutMs));
  app.use(services.metrics.middleware());
  const cors = corsMiddleware(config.corsOrigins);
  if (cors) app.use(cors);
  app.use(async (ctx, next) => {
    // During shutdown every response closes its connection, so server.close() can complete.
    if (services.shuttingDown) ctx.set('Connection', 'close');
    try {
      await next();
    } finally {
      if (services.shuttingDown && !ctx.headerSent) ctx.set('Connection', 'close');
    }
  });
  app.use(drainUnreadBody({ lingerMs: 5000, maxDrainBytes: config.maxInputBytes + FORM_OVERHEAD_BYTES }));
  app.use(errorHandler({ modelReady: () => services.model.ready }));
  app.use(router.routes());
  app.use(async (ctx: Context) => {
    // Reached only when no route took the request: a wrong method on a known path, or no such path.
    const match = router.match(ctx.path, ctx.method);
    const allowed = [...new Set(match.path.flatMap((layer) => layer.methods))];
    if (allowed.length === 0 && imgproxyAtRoot && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      ctx._matchedRoute = '/*imgproxy'; // the metrics' route label
      return imgproxyAtRoot(ctx, async () => {});
    }
    if (allowed.length === 0) {
      throw new HttpError(404, 'not_found', `no route ${ctx.method} ${ctx.path}`);
    }
    if (!allowed.includes('OPTIONS')) allowed.push('OPTIONS');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Allow', allowed.join(', '));
      ctx.status = 204;
      return;
    }
    const error = new HttpError(405, 'method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; use ${allowed.filter((m) => m !== 'OPTIONS').join(' or ')}`, {
      headers: { Allow: allowed.join(', ') },
      closeConnection: true,
    });
    sendError(ctx, error);
  });

  return { app, services };
}

/** How long jobs stopped by the shutdown get to send their 503 before connections are closed. */
export const SHUTDOWN_ANSWER_MS = 1000;

export interface RunningServer {
  server: http.Server;
  /** http://host:port actually bound. */
  url: string;
  /** The metrics listener (MATTE_METRICS_ADDRESS), unless it is off. */
  metrics?: MetricsListener;
  services: Services;
  /** Stops accepting, lets running requests finish (up to the shutdown timeout), stops the store. */
  close(): Promise<void>;
}

/**
 * Builds the app (which sets the per-job thread counts), opens the result store, listens, and loads the
 * model (readiness follows it; a failed load is logged and retried by the next request needing it).
 */
export async function startServer(options: AppOptions): Promise<RunningServer> {
  const { config } = options;
  const { app, services } = createApp(options);
  await services.store.open();

  const handler = app.callback();
  const server = http.createServer(handler);
  // `Expect: 100-continue`: no automatic 100; the form reader sends it only after the API key and
  // the load check passed, so a refused client never sends its body at all.
  server.on('checkContinue', (req, res) => {
    (req as unknown as Record<symbol, unknown>)[EXPECTS_CONTINUE] = true;
    handler(req, res);
  });
  // Requests Node refuses before Koa sees them (unparsable HTTP, headers too large, the timeout
  // backstop) still get the JSON error body and an X-Request-Id.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, code, message] =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'headers_too_large', 'the request headers are too large']
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'request_timeout', 'the request was not received in time']
          : [400, 'bad_request', 'the request is not valid HTTP/1.1'];
    const requestId = randomUUID();
    const body = JSON.stringify({ error: { code, message } });
    services.logger.info({ reqId: requestId, status, code, err: { code: err.code } }, 'request refused by the HTTP parser');
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  server.requestTimeout = config.requestTimeoutMs + 5000; // a backstop: readForm answers 408 first
  server.headersTimeout = Math.min(60_000, server.requestTimeout);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  let metrics: MetricsListener | undefined;
  if (config.metricsAddress) {
    try {
      metrics = await listenForMetrics(services.metrics, config.metricsAddress);
    } catch (err) {
      await new Promise((resolve) => server.close(resolve));
      await services.store.close();
      const { host, port } = config.metricsAddress;
      throw new Error(`MATTE_METRICS_ADDRESS=${host}:${port} cannot be listened on (${(err as NodeJS.ErrnoException).code ?? err}); set another address, or off`);
    }
  }
  const address = server.address() as AddressInfo;
  const url = defaultPublicUrl(address.address, address.port);
  if (!config.publicUrlExplicit) config.publicUrl = defaultPublicUrl(config.host, address.port);

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      services.shuttingDown = true;
      await new Promise<void>((resolve) => {
        // At the shutdown timeout every job still queued or running is stopped (inside libvips and
        // ONNX Runtime, within a second) and answered 503 shutting_down; a moment later whatever
        // connection is left is closed.
        let closeLeft: NodeJS.Timeout | undefined;
        const force = setTimeout(() => {
          services.jobs.abortAll();
          closeLeft = setTimeout(() => server.closeAllConnections(), SHUTDOWN_ANSWER_MS);
          closeLeft.unref();
        }, config.shutdownTimeoutMs);
        force.unref();
        // Keep-alive connections become idle as their last response ends: close them as they do.
        const idle = setInterval(() => server.closeIdleConnections(), 250);
        server.close(() => {
          clearTimeout(force);
          clearTimeout(closeLeft);
          clearInterval(idle);
          resolve();
        });
        server.closeIdleConnections();
      });
      await metrics?.close();
      await services.matteCache?.close();
      await services.resultCache?.close();
      await services.store.close();
    })();
    return closing;
  };
  const running: RunningServer = { server, url, metrics, services, close };
  // Requests are served from here on, while the model still loads: the caller can stop gracefully.
  options.onListening?.(running);
  await services.model.ensure().catch(() => {}); // logged; /readyz stays 503 until it loads
  return running;
}
