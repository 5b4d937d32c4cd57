// `matte serve`: the HTTP server, exactly `node dist/server/main.js` (the same start path, the same
// environment variables, the same graceful shutdown): server/main.ts runs when imported.
import type { Command } from 'commander';

export function serveCommand(program: Command): void {
  program
    .command('serve')
    .description('run the HTTP server (configured by environment variables, as `npm start`)')
    .addHelpText(
      'after',
      `
Configuration is read from the environment, e.g.
  PORT=8080 HOST=0.0.0.0 MATTE_API_KEYS=secret MATTE_CONCURRENCY=2 matte serve
(PORT, HOST, MATTE_API_KEYS, MATTE_API_KEYS_FILE, MATTE_PUBLIC_URL, MATTE_RESULTS_DIR, MATTE_MODEL,
MATTE_MODELS_DIR, MATTE_CONCURRENCY, MATTE_QUEUE_LIMIT, ... : docs/configuration.md).
Then open http://localhost:PORT/ for the playground and /docs for the API reference.`,
    )
    .action(async () => {
      await import('../server/main.js');
    });
}
