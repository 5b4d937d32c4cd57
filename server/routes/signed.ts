// GET /images/signed/{signature}/{options}.{format} (docs/api.md, "Signed URLs"): an edit or a
// background removal a CDN can cache. The signature is checked first, over the raw path, before
// the options are decoded, anything is fetched or the load check runs: a URL nobody signed costs
// one HMAC per key. The answer names its own content (the signed options and matte's version), so
// it is `public, immutable` with an ETag made from that alone: a 304 costs no fetch and no pixel.
// The extension `auto` takes the format from the request's Accept header (server/negotiate-format.ts):
// such an answer varies by Accept, and its ETag holds the formats the request takes.
import { createHash } from 'node:crypto';
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { editSteps, MATTE_VERSION, MatteError, MEDIA_TYPES, removeBackground, type Result } from '../../lib/index.js';
import { parseSignedOptions, SIGNED_AUTO, SIGNED_PATH_PREFIX, verifySignature, type ParsedSignedOptions } from '../../lib/signed-url.js';
import { HttpError } from '../errors.js';
import { animatedFormat, mayAnimate, negotiableFormats, type NegotiatedFormat } from '../negotiate-format.js';
import type { Services } from '../services.js';
import { matchesEtag } from './results.js';
import { resolveMatting, runJob, setImageSafetyHeaders } from './images.js';
import { cachedImage, knownSource } from '../cached-image.js';
import { parseInputUrl } from '../input/fetch.js';
import type { CachedImage } from '../result-cache.js';

/** `{signature}/{options}.{format}`: base64url segments, a lower-case extension. */
const SIGNED_REST = /^([A-Za-z0-9_-]{1,128})(\/[A-Za-z0-9_-]+\.([a-z0-9]{1,8}))$/;

/**
 * A query or a fragment marker anywhere in the request target. The raw target is read, not
 * ctx.querystring: `?` alone, `#x` and `?#y` leave the parsed query empty, yet a cache keyed on the
 * raw URI would keep each as a copy of its own.
 */
const QUERY_OR_FRAGMENT = /[?#]/;

const forbidden = () => new HttpError(403, 'invalid_signature', 'the URL is not signed by a key of this server (or was changed after it was signed)');

/**
 * A strong validator of the signed path: the same URL and the same matte give the same bytes. With
 * `.auto`, the same URL and the same formats taken (`negotiable`) give the same bytes.
 */
function etagOf(signedPath: string, negotiable?: readonly NegotiatedFormat[]): string {
  const what = negotiable ? `${MATTE_VERSION}\n${signedPath}\n${negotiable.join(',')}` : `${MATTE_VERSION}\n${signedPath}`;
  return `"${createHash('sha256').update(what).digest('base64url').slice(0, 32)}"`;
}

function decodeOptions(encoded: string, extension: string): ParsedSignedOptions {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch (err) {
    throw new MatteError('invalid_json', `options is not base64url of a JSON object: ${(err as Error).message}`, 'options');
  }
  return parseSignedOptions(value, extension);
}

/**
 * The model a job names (or the default), checked before the source is fetched or the result cache
 * read: a model this server does not have is a 400 that costs no fetch, and a cached answer made by
 * a model since removed is not served.
 */
async function jobModel(services: Services, options: ParsedSignedOptions): Promise<string | undefined> {
  if (options.kind === 'edit') return (await resolveMatting(options.steps, services, options.refine, options.model))?.model;
  return services.model.check(options.model);
}

/** `negotiable`: with `.auto`, the formats the request takes (the edit's `auto` is then PNG or JPEG by alpha). */
async function run(ctx: Context, services: Services, options: ParsedSignedOptions, negotiable: NegotiatedFormat[], model: string | undefined, input: Buffer): Promise<Result> {
  const { limits } = services;
  if (model) {
    ctx.state.model = model;
    await services.model.ensure();
  }
  if (options.kind === 'edit') {
    const { steps, quality, anim } = options;
    let format = options.format;
    if (format === SIGNED_AUTO) format = anim !== false && mayAnimate(input) ? animatedFormat(negotiable) : (negotiable[0] ?? SIGNED_AUTO);
    return runJob(ctx, services, (control) => editSteps(input, steps, { format, quality, anim, limits, matteCache: services.matteCache, handOver: true, ...control }));
  }
  const { trim, trim_margin: trimMargin, channels, refine } = options;
  const format = options.format === SIGNED_AUTO && negotiable.includes('webp') ? 'webp' : options.format;
  return runJob(ctx, services, (control) => removeBackground(input, { format, trim, trimMargin, channels, refine, model, limits, matteCache: services.matteCache, handOver: true, ...control }));
}

export function signedRoute(router: Router, services: Services, guards: Middleware[]): void {
  const { urlSigningKeys: keys, signedMaxAgeSeconds } = services.config;
  if (keys.length === 0) return; // off: the path is unknown (404)
  const cacheControl = `public, max-age=${signedMaxAgeSeconds}, immutable`;
  // The signature check runs before the guards (load shedding): an unsigned URL never takes a slot.
  const checkSignature: Middleware = async (ctx, next) => {
    const match = SIGNED_REST.exec(ctx.path.slice(SIGNED_PATH_PREFIX.length));
    if (!match || QUERY_OR_FRAGMENT.test(ctx.originalUrl) || !verifySignature(keys, match[1]!, match[2]!)) {
      services.metrics.signedRequest('403');
      throw forbidden();
    }
    ctx.state.signedPath = match[2];
    let negotiable: NegotiatedFormat[] | undefined;
    if (match[3] === SIGNED_AUTO) {
      negotiable = negotiableFormats(ctx.get('Accept'), services.config.autoFormats);
      ctx.state.negotiable = negotiable;
      ctx.vary('Accept');
    }
    const etag = etagOf(match[2]!, negotiable);
    ctx.set('ETag', etag);
    if (matchesEtag(ctx.get('If-None-Match'), etag)) {
      ctx.set('Cache-Control', cacheControl);
      ctx.status = 304;
      services.metrics.signedRequest('304');
      return;
    }
    await next();
  };
  // Any path below the prefix: a malformed one is 403 like a wrong signature, not 404.
  router.get(`${SIGNED_PATH_PREFIX}*rest`, checkSignature, ...guards, async (ctx) => {
    const path = ctx.state.signedPath as string;
    const dot = path.lastIndexOf('.');
    let result: CachedImage;
    try {
      const options = decodeOptions(path.slice(1, dot), path.slice(dot + 1));
      const negotiable: NegotiatedFormat[] = ctx.state.negotiable ?? [];
      // The answer from the result cache when the input is as it was (server/cached-image.ts); with
      // `.auto` the formats the request takes are part of what decides the bytes.
      const source = parseInputUrl(options.input);
      const model = await jobModel(services, options);
      const known = await knownSource(services, source);
      // The model is part of what decides the bytes: a URL that names none takes the server's default.
      const variant = `${path}\n${negotiable.join(',')}\n${model ?? ''}`;
      ({ image: result } = await cachedImage(services, { source, variant, render: (input) => run(ctx, services, options, negotiable, model, input) }, known));
    } catch (err) {
      services.metrics.signedRequest('error');
      throw err;
    }
    ctx.status = 200;
    ctx.type = MEDIA_TYPES[result.format];
    ctx.set('Cache-Control', cacheControl);
    ctx.set('X-Image-Width', String(result.width));
    ctx.set('X-Image-Height', String(result.height));
    setImageSafetyHeaders(ctx);
    ctx.body = result.data;
    services.metrics.signedRequest('200');
  });
}
