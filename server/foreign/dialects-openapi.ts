// The image URL dialects in matte's OpenAPI document (openapi.ts), where they are on: their paths,
// parameters and answers in brief. docs/api.md, "Image URLs of other servers", maps every option.
import { unsignedSourcesConfigured, type DialectConfig } from '../config-dialects.js';

type Json = Record<string, unknown>;

const SEE = 'see docs/api.md, "Image URLs of other servers"';

const text = (description: string) => ({ description, content: { 'text/plain': { schema: { type: 'string' } } } });
const image = {
  description: "the image; ETag known before any pixel (If-None-Match: 304), Cache-Control by dialect, Vary: Accept where the format was negotiated",
  headers: { ETag: { schema: { type: 'string' } }, 'X-Image-Width': { schema: { type: 'integer' } }, 'X-Image-Height': { schema: { type: 'integer' } } },
  content: Object.fromEntries(['png', 'jpeg', 'webp', 'avif', 'gif'].map((f) => [`image/${f}`, { schema: { type: 'string', format: 'binary' } }])),
};
const pathParameter = (name: string, description: string) => ({ name, in: 'path', required: true, description, schema: { type: 'string' } });

/** The dialects' paths on this configuration (none when they are off). */
export function dialectPaths(config: Partial<DialectConfig>): Json {
  const paths: Json = {};
  if (config.sources && unsignedSourcesConfigured({ sources: config.sources, sourceBase: config.sourceBase })) {
    paths['/cdn-cgi/image/{options}/{source}'] = {
      get: {
        summary: `Cloudflare's image URL: key=value options between commas, the source a path under MATTE_SOURCE_BASE or a URL under MATTE_SOURCES (${SEE})`,
        parameters: [pathParameter('options', 'width=800,fit=cover,format=auto, ...'), pathParameter('source', 'a path or an absolute URL, slashes included')],
        responses: { '200': image, '304': { description: 'not modified' }, '400': text('ERROR 9401: ... (with Cf-Resized: err=9401)'), '403': text('ERROR 9406: a source this server does not fetch'), '404': text('ERROR 9404: the source could not be fetched') },
      },
    };
    paths['/_ipx/{modifiers}/{source}'] = {
      get: {
        summary: `IPX's image URL: name_arg modifiers between , or & (_ for none) (${SEE})`,
        parameters: [pathParameter('modifiers', 'w_800,f_auto, s_400x300, ...'), pathParameter('source', 'a path or an absolute URL, slashes included')],
        responses: {
          '200': image,
          '304': { description: 'not modified' },
          '400': { description: '{"error": {"message": "[400] [IPX_INVALID_MODIFIER_ARG] ..."}}', content: { 'application/json': { schema: { type: 'object' } } } },
          '403': { description: 'IPX_FORBIDDEN_HOST / IPX_FORBIDDEN_PATH', content: { 'application/json': { schema: { type: 'object' } } } },
        },
      },
    };
  }
  if ((config.imgproxyKeys?.length ?? 0) > 0 || config.imgproxyInsecure) {
    paths[`${config.imgproxyPrefix ?? ''}/{signature}/{options}/{source}`] = {
      get: {
        summary: `imgproxy's URL: signed with MATTE_IMGPROXY_KEY and MATTE_IMGPROXY_SALT, options name:arg between slashes, the source base64url[.ext] or plain/URL[@ext]; served after matte's own routes (${SEE})`,
        parameters: [pathParameter('signature', 'base64url HMAC-SHA256 of the salt and the rest of the path'), pathParameter('options', 'rs:fill:300:200/g:sm/q:80, ...'), pathParameter('source', 'base64url of the source URL, or plain/ then the URL')],
        responses: { '200': image, '304': { description: 'not modified' }, '403': text('Forbidden: the signature'), '404': text('Invalid URL: ...'), '422': text('Invalid source image: ...') },
      },
    };
  }
  return paths;
}
