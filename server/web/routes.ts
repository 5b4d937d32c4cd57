// The people-facing pages, public like /openapi.json (the API calls they make need the key):
//   GET /      the playground (public/index.html + playground.js/.css): build an operation list, run it
//   GET /docs  the API reference, rendered in the browser from /openapi.json by Swagger UI
// Plain static files, no build step. Swagger UI comes from the swagger-ui-dist package (a
// dependency, served from node_modules), never from a CDN: the pages work offline and behind a
// firewall. Each page carries a Content-Security-Policy that allows scripts and connections to
// this origin only (inline styles only for Swagger UI, which sets style attributes).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { HttpError } from '../errors.js';

// The static files are read from the source tree (server/web/public), beside dist/ in a checkout
// and in the installed package alike.
const PUBLIC_DIR = fileURLToPath(new URL('../../../server/web/public/', import.meta.url));
const SWAGGER_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

const COMMON_CSP = "default-src 'none'; script-src 'self'; connect-src 'self' blob:; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const PLAYGROUND_CSP = `${COMMON_CSP}; style-src 'self'; img-src 'self' data: blob: http: https:`;
const DOCS_CSP = `${COMMON_CSP}; style-src 'self' 'unsafe-inline'; img-src 'self' data:`;

/** The files served under /assets/: a fixed list, so no request path ever reaches the file system. */
const ASSETS: Record<string, string> = {
  'playground.js': join(PUBLIC_DIR, 'playground.js'),
  'playground.css': join(PUBLIC_DIR, 'playground.css'),
  'operations.js': join(PUBLIC_DIR, 'operations.js'),
  'docs.js': join(PUBLIC_DIR, 'docs.js'),
  'docs.css': join(PUBLIC_DIR, 'docs.css'),
  'swagger-ui.css': join(SWAGGER_DIR, 'swagger-ui.css'),
  'swagger-ui-bundle.js': join(SWAGGER_DIR, 'swagger-ui-bundle.js'),
};

const cache = new Map<string, Promise<Buffer>>();

function load(path: string): Promise<Buffer> {
  let data = cache.get(path);
  if (!data) {
    data = readFile(path);
    data.catch(() => cache.delete(path));
    cache.set(path, data);
  }
  return data;
}

async function send(ctx: Context, path: string, csp?: string): Promise<void> {
  let body: Buffer;
  try {
    body = await load(path);
  } catch {
    throw new HttpError(404, 'not_found', `no route ${ctx.method} ${ctx.path}`);
  }
  ctx.type = TYPES[path.slice(path.lastIndexOf('.'))] ?? 'application/octet-stream';
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  // Revalidated on every load: a new version of matte shows its new pages at once.
  ctx.set('Cache-Control', 'no-cache');
  if (csp) ctx.set('Content-Security-Policy', csp);
  ctx.body = body;
}

export function webRoutes(router: Router): void {
  router.get('/', (ctx) => send(ctx, join(PUBLIC_DIR, 'index.html'), PLAYGROUND_CSP));
  router.get('/docs', (ctx) => send(ctx, join(PUBLIC_DIR, 'docs.html'), DOCS_CSP));
  router.get('/assets/:file', async (ctx) => {
    const path = Object.hasOwn(ASSETS, ctx.params.file!) ? ASSETS[ctx.params.file!] : undefined;
    if (!path) throw new HttpError(404, 'not_found', `no route ${ctx.method} ${ctx.path}`);
    await send(ctx, path);
  });
}
