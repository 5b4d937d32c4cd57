// GET /openapi.json: an OpenAPI 3.1 description of every route, with the operation schema
// generated from lib/schema.ts by zod's toJSONSchema (the same schema the server validates with).
// Refinements JSON Schema cannot derive from zod (blur's range, the >= 0 multipliers, "width and/or
// height") are added here from the same constants.
import type Router from '@koa/router';
import { z } from 'zod';
import {
  FIT_MODES,
  CHANNELS,
  MAX_TRIM_MARGIN_PERCENT,
  MAX_TRIM_MARGIN_PIXELS,
  MODEL_NAME,
  MAX_BLUR,
  MAX_TONE_FACTOR,
  MAX_OPERATIONS,
  MAX_QUALITY,
  MAX_RESIZE_SIDE,
  MIN_QUALITY,
  OUTPUT_FORMATS,
  OUTPUT_MODES,
  operationsSchema,
  operationValueSchemas,
  MATTE_VERSION,
  FORMAT_CHOICES,
  REMOVE_BACKGROUND_FORMATS,
  SIZE_NAMES,
  SIZE_MEGAPIXELS,
  MIN_MEGAPIXELS,
  MAX_MEGAPIXELS,
  MAX_SHADOW_BLUR,
  MAX_SHADOW_OFFSET,
  MIN_PLACE_SCALE,
  MAX_PLACE_SCALE,
  MAX_PLACE_MARGIN_PIXELS,
  MAX_PLACE_MARGIN_PERCENT,
  MAX_ROI_PIXELS,
  DEFAULT_SHADOW_OPACITY,
  DEFAULT_QUALITIES,
  GRAVITIES,
  MIN_DPR,
  MAX_DPR,
  MAX_SHARPEN_SIGMA,
  MAX_SHARPEN_AMOUNT,
  DEFAULT_SHARPEN_FLAT,
  DEFAULT_SHARPEN_JAGGED,
  MIN_GAMMA,
  MAX_GAMMA,
  MAX_EDGE_PIXELS,
} from '../../lib/index.js';
import { signedEditSchema, signedRemoveBackgroundSchema } from '../../lib/signed-url.js';
import type { Config } from '../config.js';
import { MAX_FIELD_BYTES } from '../input/form.js';
import { REMOVEBG_ERRORS_SCHEMA, removeBgPaths } from '../foreign/removebg-openapi.js';
import { dialectPaths } from '../foreign/dialects-openapi.js';
import type { DialectConfig } from '../config-dialects.js';

type Json = Record<string, unknown>;

function operationsJsonSchema(): Json {
  const schema = z.toJSONSchema(operationsSchema, {
    io: 'input',
    unrepresentable: 'any',
    override: (ctx) => {
      const s = ctx.zodSchema as unknown;
      const json = ctx.jsonSchema as Json;
      if (s === operationValueSchemas.blur) Object.assign(json, { minimum: 0, maximum: MAX_BLUR, description: 'Gaussian blur radius (sigma = radius / 2); 0 is no blur' });
      if (s === operationValueSchemas.brightness) Object.assign(json, { minimum: 0, maximum: MAX_TONE_FACTOR, description: 'multiplier; 1 is unchanged, 0 black' });
      if (s === operationValueSchemas.contrast) Object.assign(json, { minimum: 0, maximum: MAX_TONE_FACTOR, description: 'multiplier around mid-grey; 1 is unchanged' });
      if (s === operationValueSchemas.saturation) Object.assign(json, { minimum: 0, maximum: MAX_TONE_FACTOR, description: 'multiplier; 1 is unchanged, 0 grey' });
      if (s === operationValueSchemas.background) Object.assign(json, { description: 'CSS colour: #RGB, #RGBA, #RRGGBB, #RRGGBBAA, rgb(), rgba(), hsl(), hsla(), hwb() or a name' });
      // The staged cut-outs: extensions beside the specification's ten (docs/api.md, "Extensions: staged cut-outs").
      if (s === operationValueSchemas.size) Object.assign(json, { description: `extension: a cap on the image's area, aspect kept, never enlarging: ${SIZE_NAMES.map((n) => `${n} (${SIZE_MEGAPIXELS[n] ?? 'no cap'})`).join(', ')} megapixels, or {megapixels: ${MIN_MEGAPIXELS}..${MAX_MEGAPIXELS}}; as the first operation the decoder shrinks on load` });
      if (s === operationValueSchemas.shadow) Object.assign(json, { description: `extension: a shadow cast by the alpha, under the image: true (drop) or {type: drop|contact, opacity 0..1 (default ${DEFAULT_SHADOW_OPACITY.drop} / ${DEFAULT_SHADOW_OPACITY.contact}), blur 0..${MAX_SHADOW_BLUR} px, offsetX/offsetY -${MAX_SHADOW_OFFSET}..${MAX_SHADOW_OFFSET} px (default: scaled with the subject), color (default black)}; the canvas grows where a drop shadow would be clipped` });
      if (s === operationValueSchemas.backgroundImage) Object.assign(json, { description: 'extension: the image so far over the background_image field\'s image, covered and centred, blended in linear light; at most once' });
      if (s === operationValueSchemas.place) Object.assign(json, { description: `extension: the subject (the box of alpha > 0) scaled and placed: scale ${MIN_PLACE_SCALE}..${MAX_PLACE_SCALE} (% of the room's limiting side), position center|original|{x, y} (% of the free space; default center with a scale, else original), aspectRatio "W:H" (pads the canvas), margin pixels 0..${MAX_PLACE_MARGIN_PIXELS} or "N%" 0..${MAX_PLACE_MARGIN_PERCENT}` });
      // Responsive images: extensions beside the specification's ten (docs/api.md, "Extensions: responsive images").
      if (s === operationValueSchemas.sharpen) Object.assign(json, { description: `extension: libvips' unsharp mask on the colour bands: a number 0..${MAX_SHARPEN_SIGMA} (the sigma; 0 nothing) or {sigma, flat 0..${MAX_SHARPEN_AMOUNT} (default ${DEFAULT_SHARPEN_FLAT}), jagged 0..${MAX_SHARPEN_AMOUNT} (default ${DEFAULT_SHARPEN_JAGGED})}, vips_sharpen's sigma, m1 and m2` });
      if (s === operationValueSchemas.gamma) Object.assign(json, { minimum: MIN_GAMMA, maximum: MAX_GAMMA, description: 'extension: out = in^(1/gamma) on the colour bands; > 1 brightens' });
      if (s === operationValueSchemas.extend) Object.assign(json, { description: `extension: pixels 0..${MAX_EDGE_PIXELS} added on each side given (at least one), in background (a CSS colour, default transparent)` });
      if (s === operationValueSchemas.crop) Object.assign(json, { description: `extension: pixels 0..${MAX_EDGE_PIXELS} cut off each side given (at least one); cutting everything is 400` });
      if (s === operationValueSchemas.resize) {
        Object.assign(json, {
          anyOf: [{ required: ['width'] }, { required: ['height'] }],
          description:
            `width and/or height (1..${MAX_RESIZE_SIDE}); fit (${FIT_MODES.join(', ')}) defaults to contain. Extensions: pad (contain, then the box width x height, needs both, in background, default transparent), ` +
            `fill (exactly width x height, aspect ignored); gravity (${GRAVITIES.join(', ')}, or a focal point {x, y} as fractions 0..1) chooses the window cover and crop keep, or places pad's image (a compass or focal point); ` +
            `enlarge (default true for contain, cover, pad, fill; false for scale-down, crop); keepBoxAspect (cover, crop, fill without enlarging, both sides: a box larger than the image first shrinks into it keeping its aspect); dpr ${MIN_DPR}..${MAX_DPR} multiplies width and height, capped by the source unless enlarge`,
        });
      }
    },
  }) as Json;
  delete schema.$schema;
  schema.description = `1 to ${MAX_OPERATIONS} operations, each an object with exactly one key, applied in order; removeBackground at most once`;
  return schema;
}

const errorResponse = (description: string) => ({
  description,
  headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

const imageResponses = {
  '200': {
    description: '`output=url`: the stored result; `output=raw`: the image itself',
    headers: {
      'X-Request-Id': { $ref: '#/components/headers/RequestId' },
      'X-Image-Width': { description: 'raw only: width of the image', schema: { type: 'integer' } },
      'X-Image-Height': { description: 'raw only: height of one frame', schema: { type: 'integer' } },
    },
    content: {
      'application/json': { schema: { $ref: '#/components/schemas/StoredResult' } },
      ...Object.fromEntries(OUTPUT_FORMATS.map((f) => [`image/${f}`, { schema: { type: 'string', contentMediaType: `image/${f}` } }])),
    },
  },
  '400': errorResponse('invalid_field, unknown_field, invalid_operations, invalid_json, invalid_multipart, input_missing, input_url_forbidden (a non-public address, or a port other than 80 and 443 unless MATTE_URL_PORTS allows it)'),
  '401': errorResponse('unauthorized: missing or wrong X-Api-Key'),
  '429': errorResponse('too_many_failures: a wrong key, after it failed too often or too many different wrong keys came from this client address within a minute (MATTE_AUTH_FAILURES_PER_MINUTE; with Retry-After); a right key is never refused so'),
  '408': errorResponse('request_timeout: the body was not received in time'),
  '413': errorResponse('input_too_large (upload or fetched body), image_too_large (pixels or frames)'),
  '415': errorResponse('unsupported_image'),
  '422': errorResponse('input_url_fetch_failed, job_timeout (the job ran past MATTE_JOB_TIMEOUT_SECONDS and was stopped)'),
  '500': errorResponse('internal'),
  '503': errorResponse('overloaded (with Retry-After): the job queue or the URL fetches (MATTE_MAX_URL_FETCHES) are full; model_error while the model is not loaded; shutting_down (the shutdown timeout stopped the job; with Retry-After); or store_unavailable: output=url and the result store cannot be written (with Retry-After)'),
  '507': errorResponse('insufficient_storage: output=url and the result store is full (disk full or MATTE_RESULTS_MAX_BYTES); output=raw still works'),
};

const inputField = {
  description: 'the image file (JPEG, PNG, WebP, GIF, AVIF/HEIF, TIFF), or an absolute http(s) URL of one',
  oneOf: [{ type: 'string', contentMediaType: 'application/octet-stream' }, { type: 'string', format: 'uri', maxLength: MAX_FIELD_BYTES }],
};
/** A POST of one multipart form to an image endpoint. */
const imageEndpoint = (summary: string, required: string[], properties: Json) => ({
  post: {
    summary,
    security: [{ ApiKey: [] }],
    requestBody: {
      required: true,
      content: { 'multipart/form-data': { schema: { type: 'object', additionalProperties: false, required, properties } } },
    },
    responses: imageResponses,
  },
});

/** The JSON schema of a signed URL's options (lib/signed-url.ts), the operations as in the form. */
function signedOptionsSchema(schema: z.ZodType, description: string): Json {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  delete json.$schema;
  const properties = json.properties as Json;
  if (properties.operations) properties.operations = operationsJsonSchema();
  return { ...json, description };
}

const signedPath = {
  parameters: [
    { name: 'signature', in: 'path', required: true, description: 'base64url (no padding) of HMAC-SHA256 under a key of MATTE_URL_SIGNING_KEYS of the path after it: /{options}.{format}', schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' } },
    { name: 'file', in: 'path', required: true, description: '{options}.{format}: options is the base64url of a SignedEditOptions (with operations) or SignedRemoveBackgroundOptions (without) JSON object; format the extension (png, webp, jpeg, gif, avif; png or webp without operations; or auto: by the Accept header, AVIF or WebP of MATTE_AUTO_FORMATS where accepted, else PNG or JPEG by alpha, an animation WebP or GIF)', schema: { type: 'string', pattern: '^[A-Za-z0-9_-]+\\.[a-z]+$' } },
  ],
  get: {
    summary: 'An edit or a background removal as a signed, cacheable GET (only with MATTE_URL_SIGNING_KEYS; else 404). No API key: the signature is the capability',
    parameters: [
      { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' }, description: 'the ETag of an earlier answer: 304 without any work' },
      { name: 'Accept', in: 'header', required: false, schema: { type: 'string' }, description: 'with the extension auto: the format is chosen from the types it names (image/avif, image/webp)' },
    ],
    responses: {
      '200': {
        description: 'the image, Cache-Control: public, max-age=MATTE_SIGNED_MAX_AGE_SECONDS, immutable',
        headers: { ETag: { schema: { type: 'string' } }, Vary: { schema: { type: 'string' }, description: 'Accept, with the extension auto (the ETag then differs by the formats the Accept header takes)' }, 'Cache-Control': { schema: { type: 'string' } }, 'X-Image-Width': { schema: { type: 'integer' } }, 'X-Image-Height': { schema: { type: 'integer' } } },
        content: Object.fromEntries(OUTPUT_FORMATS.map((f) => [`image/${f}`, { schema: { type: 'string' } }])),
      },
      '304': { description: 'not modified (If-None-Match): nothing fetched or computed' },
      '400': imageResponses['400'],
      '403': errorResponse('invalid_signature: missing or wrong signature, a path changed after signing, or any query or fragment marker (?, #); checked before anything else'),
      '404': errorResponse('not_found: signed URLs are off (MATTE_URL_SIGNING_KEYS unset)'),
      '413': imageResponses['413'],
      '415': imageResponses['415'],
      '422': imageResponses['422'],
      '500': imageResponses['500'],
      '503': imageResponses['503'],
    },
  },
};

const booleanField = (description: string, fallback: boolean) => ({ type: 'string', enum: ['true', 'false', '1', '0'], default: String(fallback), description: `${description} (case-insensitive)` });
const refineField = booleanField('refine the matte at full resolution, guided by the image, and clean near-0/near-255 alpha; false: the model\'s matte alone', true);
const backgroundImageField = {
  description: 'the background image: a file or an http(s) URL, fetched and checked as input is (together with input at most MATTE_MAX_INPUT_BYTES); covered and centred on the canvas',
  oneOf: [{ type: 'string', contentMediaType: 'application/octet-stream' }, { type: 'string', format: 'uri', maxLength: MAX_FIELD_BYTES }],
};
const modelField = { type: 'string', pattern: MODEL_NAME.source, description: 'a model among the loaded ones (MATTE_MODELS; /readyz lists them); default the first. Any other: 400 invalid_field, path model' };

export function openApiDocument(config: Pick<Config, 'publicUrl' | 'maxInputBytes' | 'resultTtlSeconds'> & Partial<Pick<Config, 'removebgApi'>> & Partial<DialectConfig>): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'matte',
      version: MATTE_VERSION,
      description: 'Image editing and AI background removal. Every error is {"error": {"code", "message", "path?"}}; every response carries X-Request-Id.',
    },
    servers: [{ url: config.publicUrl }],
    paths: {
      '/images/edit': imageEndpoint('Apply an ordered list of operations to one image', ['input', 'operations'], {
        input: inputField,
        operations: { type: 'string', contentMediaType: 'application/json', contentSchema: operationsJsonSchema(), description: 'a JSON array of operations' },
        output: { type: 'string', enum: [...OUTPUT_MODES], default: 'url' },
        format: { type: 'string', enum: [...FORMAT_CHOICES], default: 'png', description: 'auto: png where the result has transparency, else jpeg (Content-Type says which)' },
        quality: { type: 'string', pattern: '^[0-9]{1,3}$', description: `integer ${MIN_QUALITY}..${MAX_QUALITY}; used for jpeg, webp and avif, validated and ignored for png and gif; default the format's: jpeg ${DEFAULT_QUALITIES.jpeg}, webp ${DEFAULT_QUALITIES.webp}, avif ${DEFAULT_QUALITIES.avif}` },
        anim: booleanField('keep every frame of an animated input when the format can animate (gif, webp)', true),
        refine: { ...refineField, description: `${refineField.description}; for a removeBackground operation that does not set its own` },
        model: { ...modelField, description: `${modelField.description}; for a removeBackground operation that does not set its own` },
        background_image: { ...backgroundImageField, description: `${backgroundImageField.description}; for a backgroundImage operation (required by one, refused without one)` },
      }),
      '/images/remove-background': imageEndpoint('Remove the background of one image', ['input'], {
        input: inputField,
        output: { type: 'string', enum: [...OUTPUT_MODES], default: 'url' },
        format: { type: 'string', enum: [...REMOVE_BACKGROUND_FORMATS], default: 'png', description: 'jpeg: flattened on white unless over a background; auto: png where the result has transparency, else jpeg' },
        trim: booleanField('crop to the bounding box of the pixels with alpha > 0 (after refinement and cleanup)', false),
        trim_margin: { type: 'string', pattern: '^[0-9]{1,3}((\\.[0-9]{1,2})?%)?$', description: `only with trim=true (else 400 invalid_field): a margin around the trimmed subject, whole pixels a side (30, at most ${MAX_TRIM_MARGIN_PIXELS}) or a percentage of the subject's box (10%, at most ${MAX_TRIM_MARGIN_PERCENT}%: of its width left and right, of its height above and below); past the image's edge the canvas grows with transparent pixels` },
        channels: { type: 'string', enum: [...CHANNELS], default: 'rgba', description: 'rgba: the cut-out; alpha: the matte alone, an 8-bit single-band greyscale PNG (webp: an opaque grey image, R = G = B = alpha, lossy at quality 80)' },
        refine: refineField,
        model: modelField,
        // The staging (docs/api.md, "Extensions: staged cut-outs"): size, trim, shadow, place, background, in that order.
        size: { type: 'string', description: `${SIZE_NAMES.join(', ')} or a number of megapixels ${MIN_MEGAPIXELS}..${MAX_MEGAPIXELS}: a cap on the result's area; the input is decoded no larger than needed` },
        roi: { type: 'string', maxLength: 80, description: `x1 y1 x2 y2 (spaces or commas): the region of interest in the input's pixels (0..${MAX_ROI_PIXELS}, 120 or 120px) or percentages (25%); nothing outside is foreground` },
        semitransparency: booleanField('false: a hard matte, 0 or 255 with its edge antialiased by one pixel', true),
        place: { type: 'string', contentMediaType: 'application/json', description: 'the place operation\'s JSON object, e.g. {"scale":80,"aspectRatio":"1:1"}' },
        shadow: { type: 'string', description: 'true, false, drop, contact, or the shadow operation\'s JSON object' },
        background: { type: 'string', description: 'a CSS colour under the cut-out (not with background_image)' },
        background_image: { ...backgroundImageField, description: `${backgroundImageField.description}; under the cut-out (not with background)` },
      }),
      '/images/results/{file}': {
        parameters: [{ name: 'file', in: 'path', required: true, description: '{id}.{ext} as in the url of a stored result', schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{24}\\.[a-z]+$' } }],
        get: {
          summary: `Download a stored result (for ${config.resultTtlSeconds} s after it was made); no API key, the id is the capability`,
          parameters: [{ name: 'Range', in: 'header', required: false, schema: { type: 'string' }, description: 'one byte range, e.g. bytes=0-99' }],
          responses: {
            '200': { description: 'the image', headers: { ETag: { schema: { type: 'string' } }, 'Cache-Control': { schema: { type: 'string' } } }, content: Object.fromEntries(OUTPUT_FORMATS.map((f) => [`image/${f}`, { schema: { type: 'string' } }])) },
            '206': { description: 'the requested byte range' },
            '304': { description: 'not modified (If-None-Match)' },
            '404': errorResponse('not_found: unknown or expired'),
            '416': errorResponse('range_not_satisfiable'),
            '503': errorResponse('store_unavailable: the result store does not answer'),
          },
        },
        head: { summary: 'Headers of a stored result', responses: { '200': { description: 'as GET, without the body' }, '404': { description: 'unknown or expired' } } },
      },
      '/images/signed/{signature}/{file}': signedPath,
      '/healthz': { get: { summary: 'Liveness', responses: { '200': { description: 'alive', content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ok' } } } } } } } } },
      '/readyz': {
        get: {
          summary: 'Readiness: the models are loaded and the result store writable',
          responses: {
            '200': {
              description: 'ready',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: {
                      status: { const: 'ready' },
                      model: { type: 'string', description: 'the default model' },
                      models: { type: 'array', items: { type: 'string' }, description: 'the loaded models (MATTE_MODELS), the default first' },
                      jobs: { type: 'object', properties: { running: { type: 'integer' }, waiting: { type: 'integer' } } },
                    },
                  },
                },
              },
            },
            '503': errorResponse('not_ready'),
          },
        },
      },
      '/openapi.json': { get: { summary: 'This document', responses: { '200': { description: 'OpenAPI 3.1' } } } },
      '/': { get: { summary: 'The playground: a web page to try the API in a browser (server/web/)', responses: { '200': { description: 'text/html' } } } },
      '/docs': { get: { summary: 'This document rendered as an API reference page (Swagger UI, served locally)', responses: { '200': { description: 'text/html' } } } },
      '/metrics': {
        get: {
          summary: 'Prometheus metrics (text exposition format). On this port only when MATTE_METRICS_KEY is set, with Authorization: Bearer KEY (or X-Api-Key: KEY), else 404; without a key on the separate listener MATTE_METRICS_ADDRESS (default 127.0.0.1:9464)',
          security: [{ MetricsKey: [] }],
          responses: { '200': { description: 'the metrics', content: { 'text/plain': { schema: { type: 'string' } } } }, '401': errorResponse('unauthorized: the metrics key was not sent'), '429': errorResponse('too_many_failures: a wrong key, after too many wrong keys from this client address (with Retry-After)') },
        },
      },
      ...(config.removebgApi === false ? {} : removeBgPaths()), // MATTE_REMOVEBG_API
      ...dialectPaths(config), // imgproxy, Cloudflare, IPX where they are on
    },
    components: {
      securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' }, MetricsKey: { type: 'http', scheme: 'bearer', description: 'MATTE_METRICS_KEY' } },
      headers: { RequestId: { description: 'the id of this request in the server log', schema: { type: 'string' } } },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: { type: 'string' }, message: { type: 'string' }, path: { type: 'string', description: 'the offending field or value, e.g. operations[2].blur' } },
            },
          },
        },
        RemoveBgErrors: REMOVEBG_ERRORS_SCHEMA,
        SignedEditOptions: signedOptionsSchema(signedEditSchema, 'the options of a signed edit: the edit form\'s fields as JSON values; format is the extension'),
        SignedRemoveBackgroundOptions: signedOptionsSchema(signedRemoveBackgroundSchema, 'the options of a signed background removal (no operations field)'),
        StoredResult: {
          type: 'object',
          required: ['id', 'url'],
          additionalProperties: false,
          properties: {
            id: { type: 'string', pattern: '^[A-Za-z0-9_-]{24}$' },
            url: { type: 'string', format: 'uri', description: "matte's download URL, or with MATTE_RESULTS_PRESIGN=1 the object store's presigned URL (valid until the result expires)" },
          },
        },
      },
    },
  };
}

export function openApiRoute(router: Router, config: Config): void {
  let document: Json | undefined;
  router.get('/openapi.json', (ctx) => {
    document ??= openApiDocument(config);
    ctx.body = document;
  });
}
