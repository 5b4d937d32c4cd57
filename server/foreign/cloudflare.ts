// Cloudflare's image URLs on matte (docs/api.md, "Cloudflare"): `/cdn-cgi/image/{key=value,...}/{source}`,
// the form Next.js's documented loader, Astro's Cloudflare adapter, Nuxt Image's `cloudflare`
// provider and unpic emit. The options are read whatever their order and applied in Cloudflare's:
// trim before anything (its pixels are the source's), flip before rotate, rotate before the resize
// (width and height are the rotated image's), the resize (fit, gravity, dpr; pad's background),
// segment=foreground (before a pad, whose box stays opaque; else after the resize, on fewer
// pixels), the tone (brightness, contrast, gamma, saturation), sharpen, blur, and the background
// under what is transparent. Errors are Cloudflare's: a status, `Cf-Resized: err=9xxx` and the
// text `ERROR 9xxx: ...`.
import type { DialectConfig } from '../config-dialects.js';
import { HttpError } from '../errors.js';
import { answerDialectError, type DialectFormat, type DialectOperation, type DialectParse } from './dialect.js';

export const CLOUDFLARE_PREFIX = '/cdn-cgi/image';

const FITS: Record<string, string> = { 'scale-down': 'scale-down', contain: 'contain', cover: 'cover', crop: 'crop', pad: 'pad', squeeze: 'fill' };
const SIDES: Record<string, string> = { left: 'west', right: 'east', top: 'north', bottom: 'south', center: 'centre', centre: 'centre', auto: 'subject', face: 'subject' };
const FORMATS: Record<string, DialectFormat> = { auto: 'negotiate', avif: 'avif', webp: 'webp', jpeg: 'jpeg', jpg: 'jpeg', 'baseline-jpeg': 'jpeg', png: 'png', gif: 'gif' };
/** quality's named levels (Cloudflare's perceptual ones, as numbers on matte's scale). */
const QUALITIES: Record<string, number> = { high: 90, 'medium-high': 80, 'medium-low': 70, low: 60 };
/** The names each option goes by (Cloudflare's short forms). */
const ALIASES: Record<string, string> = { w: 'width', h: 'height', q: 'quality', f: 'format', g: 'gravity' };
/** Options accepted and left alone: matte never writes metadata, and answers an error rather than redirecting (docs/api.md says so). */
const ACCEPTED = ['metadata', 'onerror'];

/** Cloudflare's answer to options it cannot read: 400, err=9401. */
export const invalidOptions = (message: string) => new HttpError(400, 'invalid_options', message);

function number(name: string, text: string, min: number, max: number, integer = false): number {
  const value = Number(text);
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)$/.test(text) || !(value >= min && value <= max) || (integer && !Number.isInteger(value))) {
    throw invalidOptions(`${name} must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}, not ${JSON.stringify(text)}`);
  }
  return value;
}

function boolean(name: string, text: string): boolean {
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  throw invalidOptions(`${name} must be true or false`);
}

/** `auto`, a side, or `XxY` (fractions 0..1 of the image). */
function gravity(text: string): string | { x: number; y: number } {
  if (Object.hasOwn(SIDES, text)) return SIDES[text]!;
  const point = /^(\d*\.?\d+)x(\d*\.?\d+)$/.exec(text);
  if (point && Number(point[1]) <= 1 && Number(point[2]) <= 1) return { x: Number(point[1]), y: Number(point[2]) };
  throw invalidOptions(`gravity must be auto, left, right, top, bottom or XxY (0..1 each), not ${JSON.stringify(text)}`);
}

/** `top;right;bottom;left` pixels, or `border` (the border of the top-left pixel's colour). */
function trim(text: string): DialectOperation {
  if (text === 'border') return { trim: true };
  const sides = text.split(';');
  if (sides.length !== 4) throw invalidOptions('trim must be top;right;bottom;left in pixels, or border');
  const [top, right, bottom, left] = sides.map((s) => number('trim', s, 0, 10_000, true));
  return { crop: { top, right, bottom, left } };
}

/** The options segment: `key=value` pairs between commas, each part percent-decoded. */
export function readCloudflareOptions(segment: string): Map<string, string> {
  const options = new Map<string, string>();
  for (const part of segment.split(',')) {
    if (part === '') continue;
    const at = part.indexOf('=');
    if (at <= 0) throw invalidOptions(`${JSON.stringify(part)} is not key=value`);
    let key: string;
    let value: string;
    try {
      key = decodeURIComponent(part.slice(0, at)).trim();
      value = decodeURIComponent(part.slice(at + 1)).trim();
    } catch {
      throw invalidOptions(`${JSON.stringify(part)} is not valid percent-encoding`);
    }
    key = ALIASES[key] ?? key;
    if (options.has(key)) throw invalidOptions(`${key} is given twice`);
    options.set(key, value);
  }
  if (options.size === 0) throw invalidOptions('the URL names no option (at least one is needed, e.g. width=800)');
  return options;
}

/** The translation of Cloudflare's options, in Cloudflare's order. */
export function cloudflareOperations(options: Map<string, string>): { operations: DialectOperation[]; format: DialectFormat; quality?: number; anim?: boolean } {
  const o = new Map(options);
  const take = (name: string) => {
    const value = o.get(name);
    o.delete(name);
    return value;
  };
  const operations: DialectOperation[] = [];
  const trimmed = take('trim');
  if (trimmed !== undefined) operations.push(trim(trimmed));
  const flip = take('flip');
  if (flip !== undefined) {
    if (!['h', 'v', 'hv'].includes(flip)) throw invalidOptions('flip must be h, v or hv');
    operations.push({ flip });
  }
  const rotate = take('rotate');
  if (rotate !== undefined) {
    const angle = number('rotate', rotate, 0, 270, true);
    if (angle % 90 !== 0) throw invalidOptions('rotate must be 0, 90, 180 or 270');
    if (angle !== 0) operations.push({ rotate: angle });
  }
  const width = take('width');
  const height = take('height');
  const fitText = take('fit') ?? 'scale-down';
  if (!Object.hasOwn(FITS, fitText)) throw invalidOptions(`fit must be one of ${Object.keys(FITS).join(', ')}`);
  const gravityText = take('gravity');
  const dprText = take('dpr');
  const background = take('background');
  const segment = take('segment');
  if (segment !== undefined && segment !== 'foreground') throw invalidOptions('segment must be foreground');
  const size = { ...(width !== undefined ? { width: number('width', width, 1, 10_000, true) } : {}), ...(height !== undefined ? { height: number('height', height, 1, 10_000, true) } : {}) };
  // pad needs a box: with one side it is contain, as Cloudflare resizes to that side.
  const fit = FITS[fitText] === 'pad' && (width === undefined || height === undefined) ? 'contain' : FITS[fitText]!;
  const padded = fit === 'pad';
  if (segment && padded) operations.push({ removeBackground: true });
  if (width !== undefined || height !== undefined) {
    const g = gravityText === undefined ? undefined : gravity(gravityText);
    const placed = g !== undefined && g !== 'centre' && (fit === 'cover' || fit === 'crop' || (padded && g !== 'subject'));
    operations.push({
      resize: {
        ...size,
        fit,
        ...(placed ? { gravity: g } : {}),
        ...(dprText !== undefined ? { dpr: number('dpr', dprText, 1, 4) } : {}),
        ...(padded ? { background: background ?? 'white' } : {}),
      },
    });
  } else if (gravityText !== undefined) gravity(gravityText); // checked, though without a size it places nothing
  else if (dprText !== undefined) number('dpr', dprText, 1, 4);
  if (segment && !padded) operations.push({ removeBackground: true });
  for (const tone of ['brightness', 'contrast', 'gamma', 'saturation'] as const) {
    const value = take(tone);
    if (value === undefined) continue;
    const factor = tone === 'gamma' ? number(tone, value, 0.1, 10) : number(tone, value, 0, 255);
    if (factor !== 1) operations.push({ [tone]: factor });
  }
  const sharpen = take('sharpen');
  if (sharpen !== undefined && number('sharpen', sharpen, 0, 10) > 0) operations.push({ sharpen: Number(sharpen) });
  const blur = take('blur');
  if (blur !== undefined && number('blur', blur, 0, 250) > 0) operations.push({ blur: Number(blur) });
  if (background !== undefined && !padded) operations.push({ background });
  const qualityText = take('quality');
  const quality = qualityText === undefined ? undefined : Object.hasOwn(QUALITIES, qualityText) ? QUALITIES[qualityText] : number('quality', qualityText, 1, 100, true);
  const formatText = take('format');
  if (formatText !== undefined && !Object.hasOwn(FORMATS, formatText)) throw invalidOptions(`format must be auto, avif, webp, jpeg, baseline-jpeg, png or gif (json is not served)`);
  const animText = take('anim');
  const anim = animText === undefined ? undefined : boolean('anim', animText);
  for (const name of ACCEPTED) take(name);
  const [unknown] = o.keys();
  if (unknown !== undefined) throw invalidOptions(`unknown option ${JSON.stringify(unknown)}`);
  return { operations, format: formatText === undefined ? 'source' : FORMATS[formatText]!, quality, anim };
}

/** Cloudflare's error code of a matte error (docs/api.md's table). */
function errorCode(err: HttpError): number {
  switch (err.code) {
    case 'invalid_options':
    case 'invalid_operations':
    case 'invalid_field':
      return 9401;
    case 'invalid_source':
    case 'source_forbidden':
    case 'input_url_forbidden':
      return 9406;
    case 'input_url_fetch_failed':
      return 9404;
    case 'input_too_large':
      return 9402;
    case 'image_too_large':
      return 9413;
    case 'unsupported_image':
      return 9412;
    default:
      return err.status >= 500 ? 9504 : 9523;
  }
}

export function cloudflareDialect(config: DialectConfig): DialectParse {
  const cacheControl = `public, max-age=${config.dialectMaxAgeSeconds}`;
  return {
    name: 'cloudflare',
    prefix: CLOUDFLARE_PREFIX,
    parse(rawPath, query) {
      const at = rawPath.indexOf('/', 1);
      if (!rawPath.startsWith('/') || at < 0) throw invalidOptions('the URL must be /cdn-cgi/image/{options}/{source}');
      const translation = cloudflareOperations(readCloudflareOptions(rawPath.slice(1, at)));
      // The source is not percent-decoded (Cloudflare passes it on as written), and keeps the request's query.
      const source = rawPath.slice(at + 1) + (query ? `?${query}` : '');
      return { source: /^https?:/i.test(source) ? source : `/${source}`, ...translation, cacheControl };
    },
    answerError(err) {
      const code = errorCode(err);
      const status = code === 9401 ? 400 : code === 9404 ? 404 : err.status;
      return answerDialectError(err, { status, type: 'text/plain; charset=utf-8', body: `ERROR ${code}: ${err.message}`, headers: { 'Cf-Resized': `err=${code}` } });
    },
  };
}
