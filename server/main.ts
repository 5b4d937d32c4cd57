// `node dist/server/main.js` (npm start): reads the environment, starts the server, prints its URL
// (and the generated API key when none is configured), and shuts down gracefully on SIGTERM/SIGINT:
// stop accepting, finish what is running, exit.
import { spawn } from 'node:child_process';
import { ConfigError, loadConfig, wantedThreadPoolSize, type Config } from './config.js';
import { tuneHeapGrowth } from './heap-growth.js';

/** After MATTE_SHUTDOWN_TIMEOUT_SECONDS, how long stopped jobs and the store get before the process is killed. */
const HARD_EXIT_MARGIN_MS = 3000;

function fail(message: string): never {
  process.stderr.write(`matte: ${message}\n`);
  process.exit(1);
}

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) fail(`configuration error: ${err.message}`);
  throw err;
}

// Every running job holds one thread of libuv's pool (the addon's AsyncWorker); files and DNS need
// the pool too. Its size is read when the pool first starts, which in an ES module is before this
// line runs, so when it is unset and too small the server runs itself again with it set.
const wanted = wantedThreadPoolSize(config);
if (process.env.UV_THREADPOOL_SIZE === undefined && wanted > 4) {
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, UV_THREADPOOL_SIZE: String(wanted) },
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  await run(config);
}

async function run(config: Config): Promise<void> {
  tuneHeapGrowth();
  const { startServer, createLogger, flushLogs } = await import('./app.js');
  const logger = createLogger(config);
  const pool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  if (pool < wanted) logger.warn({ UV_THREADPOOL_SIZE: pool, wanted }, 'UV_THREADPOOL_SIZE is smaller than MATTE_CONCURRENCY + 2: file and DNS work may wait behind image jobs');

  // The signal handlers come first: requests are served as soon as the server listens, while the
  // model may still be loading, and a SIGTERM then must finish them too, not kill them.
  let running: Awaited<ReturnType<typeof startServer>> | undefined;
  let stopping = false;
  const exit = (code: number) => {
    flushLogs(logger);
    process.exit(code);
  };
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing running requests');
    if (!running) exit(0); // not listening yet: no request to finish
    // The last resort, should a job not stop when the shutdown timeout aborts it: the process must
    // end anyway. Not process.exit(): libuv's exit handler joins the thread pool, i.e. waits for
    // that very job. SIGKILL cannot be caught or delayed.
    const hardExit = setTimeout(() => {
      logger.error({ afterMs: config.shutdownTimeoutMs + HARD_EXIT_MARGIN_MS }, 'shutdown timed out: a job did not stop; killing the process');
      flushLogs(logger);
      process.kill(process.pid, 'SIGKILL');
    }, config.shutdownTimeoutMs + HARD_EXIT_MARGIN_MS);
    hardExit.unref();
    running!.close().then(
      () => {
        logger.info('stopped');
        exit(0);
      },
      (err) => {
        logger.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  try {
    await startServer({
      config,
      logger,
      onListening: (listening) => {
        running = listening;
      },
    });
  } catch (err) {
    fail(`cannot start: ${(err as Error).message}`);
  }
  if (stopping || !running) return; // a signal came during the start: close() is under way
  logger.info({ url: running.url, metricsUrl: running.metrics?.url, publicUrl: config.publicUrl, concurrency: config.concurrency, queueLimit: config.queueLimit, resultsStore: config.resultsStore, ...(config.resultsStore === 'disk' ? { resultsDir: config.resultsDir } : { bucket: config.s3?.bucket }) }, 'listening');
  if (config.generatedKey) {
    // Printed once, here only, on stderr: never into the JSON log (stdout), which is often shipped
    // elsewhere. No key was configured, so one was made for this run.
    process.stderr.write(`matte: no MATTE_API_KEYS configured; this run's API key is\n\n    ${config.generatedKey}\n\nmatte: send it as the X-Api-Key header\n`);
  }
  process.stdout.write(`matte: listening on ${running.url}\n`);
}
