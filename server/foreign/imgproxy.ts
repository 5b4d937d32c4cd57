// imgproxy's URLs on matte (docs/api.md, "imgproxy"): `/{signature}/{options}/{base64url source}[.ext]`
// and `/{signature}/{options}/plain/{source}[@ext]`. The signature is checked first, on the path as
// received: HMAC-SHA256 under one of MATTE_IMGPROXY_KEY's keys, over its salt and the path after the
// signature, base64url without padding, truncated to MATTE_IMGPROXY_SIGNATURE_SIZE bytes. The
// options are read as imgproxy reads them (each `name:arg:arg`, later ones overriding earlier ones,
// presets expanded in place, the extension winning over `f`), then translated in imgproxy's own
// processing order, whatever the URL's: rotate, resize (fit, gravity, enlarge, extend, dpr), blur,
// sharpen, padding, background.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { DialectConfig, ImgproxyKey } from '../config-dialects.js';
import { HttpError } from '../errors.js';
import { answerDialectError, type DialectParse, type DialectOperation, type DialectFormat } from './dialect.js';

/** What stands for a signature in an unsigned URL (MATTE_IMGPROXY_INSECURE=1), as imgproxy's builders write it. */
export const INSECURE_SIGNATURES = ['insecure', 'unsafe', '_'];

const GRAVITIES: Record<string, string> = {
  ce: 'centre',
  no: 'north',
  so: 'south',
  ea: 'east',
  we: 'west',
  noea: 'northeast',
  nowe: 'northwest',
  soea: 'southeast',
  sowe: 'southwest',
  sm: 'attention',
};
const RESIZING_TYPES = ['fit', 'fill', 'fill-down', 'force', 'auto'] as const;
type ResizingType = (typeof RESIZING_TYPES)[number];
const FORMATS: Record<string, DialectFormat> = { png: 'png', jpg: 'jpeg', jpeg: 'jpeg', webp: 'webp', avif: 'avif', gif: 'gif' };
/** Go's strconv.ParseBool. */
const TRUE = ['1', 't', 'T', 'TRUE', 'true', 'True'];
const FALSE = ['0', 'f', 'F', 'FALSE', 'false', 'False'];

type Gravity = string | { x: number; y: number };

/** The options of one URL as imgproxy keeps them, defaults filled in. */
interface ImgproxyOptions {
  type: ResizingType;
  width: number;
  height: number;
  enlarge: boolean;
  extend: boolean;
  extendGravity: Gravity;
  gravity: Gravity;
  dpr: number;
  quality?: number;
  format?: DialectFormat;
  background?: string;
  blur?: number;
  sharpen?: number;
  rotate: number;
  padding?: [number, number, number, number];
}

/** imgproxy's answer to a URL it cannot read: 404 "Invalid URL". */
export const invalidUrl = (message: string) => new HttpError(404, 'invalid_url', message);

const forbidden = () => new HttpError(403, 'invalid_signature', 'the URL is not signed by a key of this server (or was changed after it was signed)');

/** The signature of `path` (after the signature, leading slash included) under one key. */
export function imgproxySignature(pair: ImgproxyKey, path: string, size: number): string {
  return createHmac('sha256', pair.key).update(pair.salt).update(path, 'utf8').digest().subarray(0, size).toString('base64url');
}

/** Whether `signature` signs `path` under one of the keys; every key is tried, each compared in constant time. */
export function verifyImgproxySignature(keys: readonly ImgproxyKey[], size: number, signature: string, path: string): boolean {
  if (!/^[A-Za-z0-9_-]+=*$/.test(signature)) return false;
  const given = Buffer.from(signature.replace(/=+$/, ''), 'base64url');
  let ok = false;
  for (const pair of keys) {
    const wanted = createHmac('sha256', pair.key).update(pair.salt).update(path, 'utf8').digest().subarray(0, size);
    if (given.length === wanted.length && timingSafeEqual(given, wanted)) ok = true;
  }
  return ok;
}

/** imgproxy's own repair of a plain source whose `//` a proxy merged: `/plain/https:/host` -> `/plain/https://host`. */
function fixPath(path: string): string {
  return path.replace(/\/plain\/(\S+?):\/([^/])/g, '/plain/$1://$2');
}

// ---- the options --------------------------------------------------------------------------------

function tooMany(name: string, args: string[], max: number): void {
  if (args.length > max) throw invalidUrl(`invalid ${name} arguments: ${args.join(':')} (at most ${max})`);
}

/** Go's strconv.Atoi: an optional sign and digits; `min` 0 unless said. */
function int(name: string, text: string, min = 0): number {
  const value = Number(text);
  if (!/^[+-]?\d+$/.test(text) || !Number.isSafeInteger(value) || value < min) throw invalidUrl(`invalid ${name}: ${text} (expected a whole number${min === 0 ? ' of 0 or more' : ''})`);
  return value;
}

function positiveFloat(name: string, text: string): number {
  const value = Number(text);
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(text) || !(value > 0) || !Number.isFinite(value)) throw invalidUrl(`invalid ${name}: ${text} (expected a positive number)`);
  return value;
}

function bool(name: string, text: string): boolean {
  if (TRUE.includes(text)) return true;
  if (FALSE.includes(text)) return false;
  throw invalidUrl(`invalid ${name}: ${text} (expected 1, 0, t, f, true or false)`);
}

/** `type[:x:y]`: a compass point with no offset, `sm`, or `fp:x:y`; `allowSmart`: sm is a crop's gravity, not extend's. */
function gravity(name: string, args: string[], allowSmart: boolean): Gravity {
  const [type, ...rest] = args;
  if (type === 'fp') {
    if (rest.length !== 2) throw invalidUrl(`invalid ${name}: fp needs x and y`);
    const [x, y] = rest.map((v) => Number(v));
    if (!/^\d*\.?\d+$/.test(rest[0]!) || !/^\d*\.?\d+$/.test(rest[1]!) || !(x! >= 0 && x! <= 1 && y! >= 0 && y! <= 1)) throw invalidUrl(`invalid ${name}: fp's x and y must be 0..1`);
    return { x: x!, y: y! };
  }
  if (type === undefined || !Object.hasOwn(GRAVITIES, type) || (type === 'sm' && !allowSmart)) throw invalidUrl(`invalid ${name}: ${type ?? ''}`);
  if (type === 'sm' && rest.length > 0) throw invalidUrl(`invalid ${name}: sm takes no offsets`);
  tooMany(name, args, 3);
  // Offsets move the window by pixels; matte's gravity has none, so only zero offsets are taken.
  for (const offset of rest) if (offset !== '' && Number(offset) !== 0) throw invalidUrl(`invalid ${name}: gravity offsets are not supported (use fp:x:y)`);
  return GRAVITIES[type]!;
}

/** `hex` or `r:g:b`, as a CSS colour; an empty argument resets it. */
function background(args: string[]): string | undefined {
  if (args.length === 1) {
    if (args[0] === '') return undefined;
    if (!/^(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(args[0]!)) throw invalidUrl(`invalid background: ${args[0]}`);
    return `#${args[0]}`;
  }
  if (args.length !== 3) throw invalidUrl(`invalid background arguments: ${args.join(':')}`);
  const [r, g, b] = args.map((v) => int('background', v));
  if (r! > 255 || g! > 255 || b! > 255) throw invalidUrl(`invalid background: ${args.join(':')}`);
  return `rgb(${r}, ${g}, ${b})`;
}

function format(text: string): DialectFormat {
  const value = FORMATS[text.toLowerCase()];
  if (!value) throw invalidUrl(`invalid image format: ${text} (matte writes png, jpg, webp, avif and gif)`);
  return value;
}

function defaults(): ImgproxyOptions {
  return { type: 'fit', width: 0, height: 0, enlarge: false, extend: false, extendGravity: 'centre', gravity: 'centre', dpr: 1, rotate: 0 };
}

function applySize(o: ImgproxyOptions, args: string[]): void {
  tooMany('size', args, 7);
  if (args[0]) o.width = int('width', args[0]);
  if (args[1]) o.height = int('height', args[1]);
  if (args[2]) o.enlarge = bool('enlarge', args[2]);
  if (args[3]) applyExtend(o, args.slice(3));
}

function applyExtend(o: ImgproxyOptions, args: string[]): void {
  tooMany('extend', args, 4);
  o.extend = bool('extend', args[0]!);
  if (args.length > 1) o.extendGravity = gravity('extend gravity', args.slice(1), false);
}

function applyOption(o: ImgproxyOptions, name: string, args: string[], presets: Record<string, string[]>, used: string[]): void {
  const one = () => {
    tooMany(name, args, 1);
    return args[0]!;
  };
  switch (name) {
    case 'resize':
    case 'rs':
      tooMany('resize', args, 8);
      if (args[0]) o.type = resizingType(args[0]);
      if (args.length > 1) applySize(o, args.slice(1));
      return;
    case 'size':
    case 's':
      return applySize(o, args);
    case 'resizing_type':
    case 'rt':
      o.type = resizingType(one());
      return;
    case 'width':
    case 'w':
      o.width = int('width', one());
      return;
    case 'height':
    case 'h':
      o.height = int('height', one());
      return;
    case 'enlarge':
    case 'el':
      o.enlarge = bool('enlarge', one());
      return;
    case 'extend':
    case 'ex':
      return applyExtend(o, args);
    case 'gravity':
    case 'g':
      o.gravity = gravity('gravity', args, true);
      return;
    case 'dpr':
      o.dpr = positiveFloat('dpr', one());
      return;
    case 'quality':
    case 'q': {
      const q = int('quality', one());
      if (q < 1 || q > 100) throw invalidUrl(`invalid quality: ${q} (expected 1..100)`);
      o.quality = q;
      return;
    }
    case 'format':
    case 'f':
    case 'ext':
      o.format = format(one());
      return;
    case 'background':
    case 'bg':
      o.background = background(args);
      return;
    case 'blur':
    case 'bl':
      o.blur = positiveFloat('blur', one());
      return;
    case 'sharpen':
    case 'sh':
      o.sharpen = positiveFloat('sharpen', one());
      return;
    case 'rotate':
    case 'rot': {
      const angle = int('rotate', one(), Number.MIN_SAFE_INTEGER);
      if (angle % 90 !== 0) throw invalidUrl('rotation angle must be a multiple of 90');
      o.rotate = angle;
      return;
    }
    case 'padding':
    case 'pd': {
      tooMany('padding', args, 4);
      const side = (i: number, fallback: number) => (args[i] ? int('padding', args[i]!) : fallback);
      const top = side(0, 0);
      const right = side(1, top);
      const bottom = side(2, top);
      o.padding = [top, right, bottom, side(3, right)];
      return;
    }
    case 'preset':
    case 'pr':
      for (const preset of args) applyPreset(o, preset, presets, used);
      return;
    case 'cachebuster':
    case 'cb':
      one(); // changes the URL (so a CDN's key), never the image
      return;
  }
  throw invalidUrl(`unknown processing option ${name}`);
}

function resizingType(text: string): ResizingType {
  if (!(RESIZING_TYPES as readonly string[]).includes(text)) throw invalidUrl(`invalid resizing type: ${text}`);
  return text as ResizingType;
}

function applyPreset(o: ImgproxyOptions, name: string, presets: Record<string, string[]>, used: string[]): void {
  const preset = Object.hasOwn(presets, name) ? presets[name] : undefined;
  if (!preset) throw invalidUrl(`unknown preset: ${name}`);
  if (used.includes(name)) return; // a preset naming itself again: imgproxy skips it
  for (const segment of preset) {
    const [optionName, ...args] = segment.split(':');
    applyOption(o, optionName!, args, presets, [...used, name]);
  }
}

// ---- the path -----------------------------------------------------------------------------------

/** The source text and extension after the options: base64url (split by `/` as builders may) or `plain/...@ext`. */
function sourceOf(parts: string[]): { source: string; extension?: string } {
  if (parts.length === 0) throw invalidUrl('the image URL is empty');
  if (parts[0] === 'plain' && parts.length > 1) {
    const [encoded, extension, ...more] = parts.slice(1).join('/').split('@');
    if (!encoded) throw invalidUrl('the image URL is empty');
    if (more.length > 0) throw invalidUrl('several formats are given');
    let source: string;
    try {
      source = decodeURIComponent(encoded);
    } catch {
      throw invalidUrl('the plain image URL is not valid percent-encoding');
    }
    return { source, extension: extension || undefined };
  }
  const [encoded, extension, ...more] = parts.join('').split('.');
  if (!encoded) throw invalidUrl('the image URL is empty');
  if (more.length > 0) throw invalidUrl('several formats are given');
  if (!/^[A-Za-z0-9_-]+=*$/.test(encoded)) throw invalidUrl('the image URL is not base64url');
  const source = Buffer.from(encoded.replace(/=+$/, ''), 'base64url').toString('utf8');
  if (source.includes('\ufffd')) throw invalidUrl('the image URL is not base64url of a UTF-8 URL');
  return { source, extension: extension || undefined };
}

/** Reads `/{options}/{source}` (what follows the signature) into options, with presets (`default` first). */
export function readImgproxyPath(path: string, presets: Record<string, string[]>): { options: ImgproxyOptions; source: string } {
  const parts = path.replace(/^\//, '').split('/');
  const options = defaults();
  if (Object.hasOwn(presets, 'default')) applyPreset(options, 'default', presets, []);
  let i = 0;
  for (; i < parts.length; i++) {
    const [name, ...args] = parts[i]!.split(':');
    if (args.length === 0) break; // the first part without ':' starts the source
    applyOption(options, name!, args, presets, []);
  }
  const { source, extension } = sourceOf(parts.slice(i));
  if (extension !== undefined) options.format = format(extension);
  return { options, source };
}

// ---- the translation ----------------------------------------------------------------------------

/** The resize step of imgproxy's resizing type, enlarge and extend (docs/api.md's table says where they differ). */
function resizeOf(o: ImgproxyOptions): DialectOperation | undefined {
  if (o.width === 0 && o.height === 0) return undefined;
  const size = { ...(o.width ? { width: o.width } : {}), ...(o.height ? { height: o.height } : {}) };
  const both = o.width > 0 && o.height > 0;
  const dpr = o.dpr !== 1 ? { dpr: o.dpr } : {};
  const window = o.gravity === 'centre' ? {} : { gravity: o.gravity };
  let resize: Record<string, unknown>;
  const type = o.type === 'auto' ? 'fill' : o.type;
  if (type === 'force') resize = { fit: 'fill', enlarge: o.enlarge };
  else if (type === 'fit' || !both) {
    resize = o.extend && both ? { fit: 'pad', enlarge: o.enlarge, ...(o.extendGravity === 'centre' ? {} : { gravity: o.extendGravity }), ...(o.background ? { background: o.background } : {}) } : { fit: o.enlarge ? 'contain' : 'scale-down' };
  } else if (o.enlarge || o.extend) resize = { fit: 'cover', ...window };
  // fill without enlarge: the window of the box, no larger than the image; fill-down's box first
  // shrinks into a smaller image keeping its aspect.
  else resize = { fit: 'crop', ...window, ...(type === 'fill-down' ? { keepBoxAspect: true } : {}) };
  return { resize: { ...size, ...resize, ...dpr } };
}

/** The translation of imgproxy's options onto matte's operations, in imgproxy's processing order. */
export function imgproxyOperations(o: ImgproxyOptions): { operations: DialectOperation[]; format: DialectFormat; quality?: number } {
  const operations: DialectOperation[] = [];
  const angle = ((o.rotate % 360) + 360) % 360;
  if (angle !== 0) operations.push({ rotate: angle });
  const resize = resizeOf(o);
  if (resize) operations.push(resize);
  // imgproxy's blur and sharpen take libvips' sigma; matte's blur takes a radius of twice the sigma.
  if (o.blur !== undefined) operations.push({ blur: o.blur * 2 });
  if (o.sharpen !== undefined) operations.push({ sharpen: { sigma: o.sharpen } });
  if (o.padding && o.padding.some((p) => p > 0)) {
    const [top, right, bottom, left] = o.padding.map((p) => Math.round(p * o.dpr));
    operations.push({ extend: { top, right, bottom, left, ...(o.background ? { background: o.background } : {}) } });
  }
  if (o.background) operations.push({ background: o.background });
  return { operations, format: o.format ?? 'source', quality: o.quality };
}

// ---- the dialect --------------------------------------------------------------------------------

/** imgproxy's dialect on this configuration, or undefined when it is off (no key and no insecure URLs). */
export function imgproxyDialect(config: DialectConfig & { signedMaxAgeSeconds: number }): DialectParse | undefined {
  const { imgproxyKeys: keys, imgproxySignatureSize: size, imgproxyInsecure: insecure, imgproxyPresets: presets } = config;
  if (keys.length === 0 && !insecure) return undefined;
  return {
    name: 'imgproxy',
    prefix: config.imgproxyPrefix,
    parse(rawPath) {
      const at = rawPath.indexOf('/', 1);
      if (!rawPath.startsWith('/') || at < 0) throw invalidUrl('the URL has no signature segment');
      const signature = rawPath.slice(1, at);
      const path = fixPath(rawPath.slice(at));
      const unsigned = insecure && (keys.length === 0 || INSECURE_SIGNATURES.includes(signature));
      if (!unsigned && !verifyImgproxySignature(keys, size, signature, path)) throw forbidden();
      const { options, source } = readImgproxyPath(path, presets);
      return { source, signed: !unsigned, ...imgproxyOperations(options), cacheControl: unsigned ? `public, max-age=${config.dialectMaxAgeSeconds}` : `public, max-age=${config.signedMaxAgeSeconds}, immutable` };
    },
    answerError: (err) => {
      const [status, message] = imgproxyError(err);
      return answerDialectError(err, { status, type: 'text/plain; charset=utf-8', body: `${message}: ${err.message}` });
    },
  };
}

/** imgproxy's status and public message for an error of this kind: 404 for a URL it cannot read or a source it may not fetch, 422 for an image it cannot process. */
function imgproxyError(err: HttpError): [number, string] {
  if (err.code === 'invalid_signature') return [403, 'Forbidden'];
  if (err.code === 'invalid_url' || err.code === 'invalid_operations' || err.code === 'invalid_field') return [404, 'Invalid URL'];
  if (['source_forbidden', 'invalid_source', 'input_url_forbidden', 'input_url_fetch_failed'].includes(err.code)) return [404, 'Invalid source URL'];
  if (['unsupported_image', 'image_too_large', 'input_too_large'].includes(err.code)) return [422, 'Invalid source image'];
  return [err.status, err.status >= 500 ? 'Internal error' : 'Error'];
}
