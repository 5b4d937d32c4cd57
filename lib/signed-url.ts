// Signed GET URLs (docs/api.md, "Signed URLs"): `/images/signed/{signature}/{options}.{format}`,
// where `options` is the base64url of the JSON the POST endpoints take (with `input` a URL) and
// `signature` the base64url HMAC-SHA256, under one of the server's keys, of the path after the
// signature (`/{options}.{format}`, leading slash included), as imgproxy signs its URLs. The
// library makes them (signUrl), the server checks them (verifySignature) and reads the options
// (parseSignedOptions) with the same schema as the form, so that what signs and what serves agree.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { MatteError } from './errors.js';
import {
  CHANNELS,
  MATTE_FORMATS,
  MAX_QUALITY,
  MIN_QUALITY,
  MODEL_NAME,
  parseTrimMargin,
  type Channels,
  OUTPUT_FORMATS,
  parseOperations,
  type MatteFormat,
  type Operation,
  type OutputFormat,
  type Step,
} from './schema.js';

const QUALITY_MESSAGE = `must be a whole number from ${MIN_QUALITY} to ${MAX_QUALITY}`;

/** Where signed URLs live on the server. */
export const SIGNED_PATH_PREFIX = '/images/signed/';
/** A signing key's least length: the key is used as its UTF-8 bytes, so it must carry enough entropy. */
export const MIN_SIGNING_KEY_LENGTH = 32;
/** Longest input URL in signed options (the fetcher takes no longer ones in practice). */
export const MAX_SIGNED_INPUT_URL = 4096;
/** base64url of an HMAC-SHA256 without padding. */
const SIGNATURE_LENGTH = 43;

/** The options of a signed URL: an edit (with `operations`) or a background removal (without). */
export interface SignedOptions {
  /** The image's absolute http: or https: URL, fetched by the server with its URL guard. */
  input: string;
  /** Present: an edit (POST /images/edit); absent: a background removal (POST /images/remove-background). */
  operations?: Operation[];
  /** Edit only: 1..100 (default 80). */
  quality?: number;
  /** Edit only: keep every frame of an animation (default true). */
  anim?: boolean;
  /** Background removal only: crop to the subject (default false). */
  trim?: boolean;
  /** Background removal only, with trim: a margin around the subject, pixels (30) or a share of its box ("10%"). */
  trim_margin?: number | string;
  /** Background removal only: `rgba` (default) or `alpha` (the matte alone). */
  channels?: Channels;
  refine?: boolean;
  model?: string;
}

const modelName = () => z.string({ error: 'must be a model name' }).regex(MODEL_NAME, { error: 'must be a model name (letters, digits, . _ -)' });
const input = () =>
  z
    .string({ error: 'must be an absolute http: or https: URL' })
    .max(MAX_SIGNED_INPUT_URL, { error: `must be at most ${MAX_SIGNED_INPUT_URL} characters` })
    .refine((text) => /^https?:\/\//i.test(text) && URL.canParse(text), { error: 'must be an absolute http: or https: URL' });
const bool = () => z.boolean({ error: 'must be true or false' });

/** The options JSON of a signed edit: the edit form's fields, typed as JSON (no `format`: the extension is the format). */
export const signedEditSchema = z.strictObject({
  input: input(),
  operations: z.unknown(),
  quality: z.number({ error: QUALITY_MESSAGE }).int({ error: QUALITY_MESSAGE }).min(MIN_QUALITY, { error: QUALITY_MESSAGE }).max(MAX_QUALITY, { error: QUALITY_MESSAGE }).optional(),
  anim: bool().optional(),
  refine: bool().optional(),
  model: modelName().optional(),
});

/** The options JSON of a signed background removal: the remove-background form's fields. */
export const signedRemoveBackgroundSchema = z.strictObject({
  input: input(),
  trim: bool().optional(),
  trim_margin: z.union([z.number(), z.string()], { error: 'must be whole pixels (30) or a percentage ("10%")' }).optional(),
  channels: z.enum(CHANNELS, { error: `must be one of ${CHANNELS.join(', ')}` }).optional(),
  refine: bool().optional(),
  model: modelName().optional(),
});

/**
 * The extension `auto`: the format the request's Accept header takes (the server negotiates it,
 * docs/api.md "Extensions: responsive images"); the others name the format.
 */
export const SIGNED_AUTO = 'auto';
export type SignedFormat = OutputFormat | typeof SIGNED_AUTO;
const EDIT_EXTENSIONS: readonly string[] = [...OUTPUT_FORMATS, SIGNED_AUTO];
const REMOVAL_EXTENSIONS: readonly string[] = [...MATTE_FORMATS, SIGNED_AUTO];

export type ParsedSignedOptions =
  | { kind: 'edit'; input: string; steps: Step[]; format: SignedFormat; quality?: number; anim?: boolean; refine?: boolean; model?: string }
  | { kind: 'removeBackground'; input: string; format: MatteFormat | typeof SIGNED_AUTO; trim?: boolean; trim_margin?: number | string; channels?: Channels; refine?: boolean; model?: string };

function checked<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const key = (issue as { keys: string[] }).keys[0]!;
    throw new MatteError('invalid_field', `options has an unknown field "${key}" (an edit takes input, operations, quality, anim, refine, model; a background removal input, trim, trim_margin, channels, refine, model; the format is the extension)`, key);
  }
  throw new MatteError('invalid_field', `${path || 'options'} ${issue.message}`, path || 'options');
}

/** Reads the options of a signed URL (already JSON-decoded) for the given extension; MatteError on a bad one. */
export function parseSignedOptions(value: unknown, extension: string): ParsedSignedOptions {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new MatteError('invalid_field', 'options must be a JSON object', 'options');
  }
  if (Object.hasOwn(value, 'operations')) {
    if (!EDIT_EXTENSIONS.includes(extension)) {
      throw new MatteError('invalid_field', `format (the extension) must be one of ${EDIT_EXTENSIONS.join(', ')}`, 'format');
    }
    const { operations, ...rest } = checked(signedEditSchema, value);
    return { kind: 'edit', ...rest, steps: parseOperations(operations), format: extension as SignedFormat };
  }
  if (!REMOVAL_EXTENSIONS.includes(extension)) {
    throw new MatteError('invalid_field', `format (the extension) of a background removal must be one of ${REMOVAL_EXTENSIONS.join(', ')}`, 'format');
  }
  const options = checked(signedRemoveBackgroundSchema, value);
  if (options.trim_margin !== undefined) {
    const margin = parseTrimMargin(options.trim_margin);
    if (typeof margin === 'string') throw new MatteError('invalid_field', `trim_margin ${margin}`, 'trim_margin');
    if (!options.trim) throw new MatteError('invalid_field', 'trim_margin needs trim: true (the margin is around the trimmed subject)', 'trim_margin');
  }
  return { kind: 'removeBackground', ...options, format: extension as MatteFormat | typeof SIGNED_AUTO };
}

/** The signature of `path` (what follows the signature, leading slash included) under `key`. */
export function signPath(key: string, path: string): string {
  return createHmac('sha256', key).update(path, 'utf8').digest('base64url');
}

/**
 * Whether `signature` signs `path` under one of `keys`. Every key is tried, each compared in
 * constant time, so the time taken tells nothing about how much of a signature was right.
 */
export function verifySignature(keys: readonly string[], signature: string, path: string): boolean {
  const given = Buffer.from(signature, 'utf8');
  let ok = false;
  for (const key of keys) {
    const wanted = Buffer.from(signPath(key, path), 'utf8');
    if (given.length === SIGNATURE_LENGTH && timingSafeEqual(given, wanted)) ok = true;
  }
  return ok;
}

export interface SignUrlSettings {
  /** One of the server's MATTE_URL_SIGNING_KEYS. */
  key: string;
  /**
   * The output format, the URL's extension: png (default), webp, jpeg, gif, avif (png or webp
   * without operations), or auto: the format each request's Accept header takes.
   */
  format?: SignedFormat;
  /** The server's (or the CDN's) origin, e.g. https://img.example.com; default: a path alone. */
  base?: string;
}

/**
 * A signed GET URL for `options` (validated first: a URL the server would refuse is never made).
 *
 *   signUrl({ input: 'https://shop.example/p/1.jpg', operations: [{ removeBackground: true }, { resize: { width: 800 } }] },
 *           { key: process.env.SIGNING_KEY, format: 'webp', base: 'https://img.example.com' })
 */
export function signUrl(options: SignedOptions, settings: SignUrlSettings): string {
  if (typeof settings?.key !== 'string' || settings.key.length < MIN_SIGNING_KEY_LENGTH) {
    throw new MatteError('invalid_option', `key must be a signing key of at least ${MIN_SIGNING_KEY_LENGTH} characters`, 'key');
  }
  const format = settings.format ?? 'png';
  parseSignedOptions(options, format);
  const path = `/${Buffer.from(JSON.stringify(options), 'utf8').toString('base64url')}.${format}`;
  const base = (settings.base ?? '').replace(/\/+$/, '');
  return `${base}${SIGNED_PATH_PREFIX}${signPath(settings.key, path)}${path}`;
}
