// GET /healthz (liveness) and GET /readyz (readiness: the model is loaded, the result store is
// writable (real bytes written: a full disk, a read-only file system or an object store that
// refuses the credentials is not ready), and the server is not shutting down).
import type Router from '@koa/router';
import { HttpError } from '../errors.js';
import type { Services } from '../services.js';

export function healthRoutes(router: Router, services: Services): void {
  router.get('/healthz', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok' };
  });

  router.get('/readyz', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const problems: string[] = [];
    if (services.shuttingDown) problems.push('the server is shutting down');
    if (!services.model.ready) problems.push(services.model.lastError ? 'the model could not be loaded (see the server log)' : 'the model is loading');
    if (!(await services.store.writable())) problems.push(`the result store (${services.store.kind}) cannot be written`);
    if (problems.length) throw new HttpError(503, 'not_ready', problems.join('; '), { headers: { 'Retry-After': '5' } });
    const { running, waiting } = services.limiter.stats;
    ctx.body = { status: 'ready', model: services.model.names[0], models: services.model.names, store: services.store.kind, jobs: { running, waiting } };
  });
}
