// The URL dialects of other image servers (docs/api.md, "Image URLs of other servers"), mounted
// on the app: Cloudflare's /cdn-cgi/image/ and IPX's /_ipx/ once a source is configured
// (MATTE_SOURCES or MATTE_SOURCE_BASE: an unsigned URL must not make the server fetch anything),
// imgproxy's once a key is set (or its insecure URLs are allowed), under MATTE_IMGPROXY_PREFIX or
// at the host's root. remove.bg's API, the other foreign one here, is mounted by app.ts itself.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { unsignedSourcesConfigured } from '../config-dialects.js';
import type { Services } from '../services.js';
import { cloudflareDialect } from './cloudflare.js';
import { dialectHandler, dialectRoute } from './dialect.js';
import { imgproxyDialect } from './imgproxy.js';
import { ipxDialect } from './ipx.js';

/**
 * Mounts the dialects that are on. Returns imgproxy's handler when imgproxy is served at the root:
 * the app calls it for a GET that no route of matte's own took (app.ts's fallback), so matte's
 * paths keep their answers (their 404 and 405 included).
 */
export function foreignRoutes(router: Router, services: Services, guards: Middleware[]): Middleware | undefined {
  const { config } = services;
  if (unsignedSourcesConfigured(config)) {
    dialectRoute(router, cloudflareDialect(config), services, guards);
    dialectRoute(router, ipxDialect(config), services, guards);
  }
  const imgproxy = imgproxyDialect(config);
  if (!imgproxy) return undefined;
  if (imgproxy.prefix) {
    dialectRoute(router, imgproxy, services, guards);
    return undefined;
  }
  return dialectHandler(imgproxy, services, guards);
}
