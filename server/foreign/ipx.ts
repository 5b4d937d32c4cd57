// IPX's image URLs on matte (unjs/ipx, Nuxt Image's default provider; docs/api.md, "IPX"):
// `/_ipx/{modifiers}/{id}`, modifiers `name_arg_arg` between `,` or `&` (`_` alone for none), the id a
// path under MATTE_SOURCE_BASE or an absolute URL under MATTE_SOURCES. IPX hands its modifiers to
// sharp sorted by name, and sharp applies them in its own fixed pipeline whatever the call order:
// trim, rotate (width and height are the rotated image's), flip and flop, the resize (the last of
// w_, h_, s_ and resize_ in IPX's order wins: each is a sharp resize that replaces the one before),
// extend, blur, sharpen, grayscale, flatten. That pipeline is the order here. Errors are IPX's:
// `{"error": {"message": "[400] [IPX_...] ..."}}` with the status.
import type { DialectConfig } from '../config-dialects.js';
import { HttpError } from '../errors.js';
import { answerDialectError, type DialectFormat, type DialectOperation, type DialectParse } from './dialect.js';

export const IPX_PREFIX = '/_ipx';

/** sharp's positions (and their numeric gravity constants) as matte's gravity. */
const POSITIONS: Record<string, string> = {
  top: 'north',
  'right top': 'northeast',
  right: 'east',
  'right bottom': 'southeast',
  bottom: 'south',
  'left bottom': 'southwest',
  left: 'west',
  'left top': 'northwest',
  north: 'north',
  northeast: 'northeast',
  east: 'east',
  southeast: 'southeast',
  south: 'south',
  southwest: 'southwest',
  west: 'west',
  northwest: 'northwest',
  center: 'centre',
  centre: 'centre',
  entropy: 'attention',
  attention: 'attention',
  '0': 'centre',
  '1': 'north',
  '2': 'east',
  '3': 'south',
  '4': 'west',
  '5': 'northeast',
  '6': 'southeast',
  '7': 'southwest',
  '8': 'northwest',
  '16': 'attention',
  '17': 'attention',
};
const FITS = ['contain', 'cover', 'fill', 'inside', 'outside'] as const;
const FORMATS: Record<string, DialectFormat> = { auto: 'negotiate', jpeg: 'jpeg', jpg: 'jpeg', png: 'png', webp: 'webp', avif: 'avif', gif: 'gif' };
/** The modifiers that only set what the others use (IPX's handlers of order -1). */
const CONTEXT = ['q', 'quality', 'fit', 'pos', 'position', 'b', 'background', 'f', 'format', 'a', 'animated', 'enlarge', 'kernel'];
/** The modifiers that resize: each a sharp resize replacing the previous one. */
const RESIZES = ['w', 'width', 'h', 'height', 's', 'resize'];
/** sharp's default background: opaque black (contain's bars, extend's edges). */
const SHARP_BACKGROUND = '#000000';

/** IPX's answer to a modifier it cannot read. */
const invalidArg = (name: string, arg: string, expected: string) => new HttpError(400, 'invalid_modifier', `Invalid \`${name}\` modifier argument: \`${arg}\` (expected ${expected})`);
const invalidModifier = (message: string) => new HttpError(400, 'invalid_modifier', message);

function number(name: string, arg: string | undefined, options: { min?: number; max?: number; integer?: boolean } = {}): number | undefined {
  if (arg === undefined || arg === '' || arg === 'undefined') return undefined;
  const value = Number(arg);
  const { min, max, integer } = options;
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(arg) || !Number.isFinite(value) || (integer && !Number.isInteger(value)) || (min !== undefined && value < min) || (max !== undefined && value > max)) {
    throw invalidArg(name, arg, `${integer ? 'an integer' : 'a number'}${min !== undefined ? ` >= ${min}` : ''}${max !== undefined ? ` <= ${max}` : ''}`);
  }
  return value;
}

/** IPX's colours: hex without `#` (`fff`, `ff0000`), rgb()/hsl()/hwb(), or a name. */
function colour(name: string, arg: string): string {
  if (/^#?(?:[\da-f]{3,4}|[\da-f]{6}|[\da-f]{8})$/i.test(arg)) return arg.startsWith('#') ? arg : `#${arg}`;
  if (/^(?:rgba?|hsla?|hwb)\([\d\s%,./-]+\)$/i.test(arg) || /^[a-z]{3,20}$/i.test(arg)) return arg;
  throw invalidArg(name, arg, 'a hex (`f00`, `ff0000`) or named (`red`) colour');
}

/** The modifiers segment: `name_arg_arg` (or `name:`/`name=`) between `,` or `&`, each part percent-decoded as IPX does. */
export function readIpxModifiers(segment: string): Map<string, string> {
  const modifiers = new Map<string, string>();
  if (segment === '_') return modifiers;
  for (const part of segment.split(/[&,]/)) {
    if (part === '') continue;
    const [key = '', ...values] = part.split(/[:=_]/);
    try {
      modifiers.set(decodeURIComponent(key), values.map((v) => decodeURIComponent(v)).join('_'));
    } catch {
      throw invalidModifier(`${JSON.stringify(part)} is not valid percent-encoding`);
    }
  }
  return modifiers;
}

/** IPX's handler order: context modifiers first, then by name as written, as IPX sorts them (localeCompare). */
function inIpxOrder(names: string[]): string[] {
  const key = (name: string) => (CONTEXT.includes(name) ? '-1' : name);
  return [...names].sort((a, b) => key(a).localeCompare(key(b)));
}

interface IpxResize {
  width?: number;
  height?: number;
  box: boolean;
}

/** A resize modifier's size: w_ and h_ one side, s_/resize_ a box (`WxH`, or `N` for a square). */
function resizeOf(name: string, arg: string): IpxResize | undefined {
  if (name === 'w' || name === 'width') {
    const width = number('width', arg, { min: 1, integer: true });
    return width === undefined ? undefined : { width, box: false };
  }
  if (name === 'h' || name === 'height') {
    const height = number('height', arg, { min: 1, integer: true });
    return height === undefined ? undefined : { height, box: false };
  }
  if (arg === '' || arg === 'undefined') return undefined;
  const match = /^(\d+)(?:x(\d+))?$/.exec(arg);
  const width = Number(match?.[1]);
  const height = match?.[2] === undefined ? width : Number(match[2]);
  if (!match || !(width > 0) || !(height > 0)) throw invalidArg('resize', arg, '`{width}x{height}` of positive integers');
  return { width, height, box: true };
}

/** The translation of IPX's modifiers, in sharp's pipeline order. */
export function ipxOperations(modifiers: Map<string, string>): { operations: DialectOperation[]; format: DialectFormat; quality?: number; anim: boolean } {
  const get = (...names: string[]) => names.map((n) => modifiers.get(n)).find((v) => v !== undefined);
  const known = new Set([...CONTEXT, ...RESIZES, 'trim', 'rotate', 'flip', 'flop', 'extend', 'blur', 'sharpen', 'grayscale', 'flatten', 'modulate']);
  for (const name of modifiers.keys()) if (!known.has(name)) throw invalidModifier(`Unknown modifier \`${name}\``);
  const operations: DialectOperation[] = [];
  const background = get('b', 'background');
  const bg = background === undefined || background === '' ? undefined : colour('background', background);
  if (modifiers.has('trim')) {
    number('trim', modifiers.get('trim'), { min: 0 });
    operations.push({ trim: true });
  }
  const rotate = number('rotate', modifiers.get('rotate'), { min: -3600, max: 3600 });
  if (rotate !== undefined) {
    if (rotate % 90 !== 0) throw invalidArg('rotate', String(rotate), 'a multiple of 90 (matte rotates by quarter turns)');
    const angle = ((rotate % 360) + 360) % 360;
    if (angle !== 0) operations.push({ rotate: angle });
  }
  const flip = modifiers.has('flip');
  const flop = modifiers.has('flop');
  if (flip || flop) operations.push({ flip: flip && flop ? 'hv' : flip ? 'v' : 'h' });
  // Each resize modifier is a sharp resize that replaces the previous one: the last in IPX's order wins.
  let resize: IpxResize | undefined;
  for (const name of inIpxOrder([...modifiers.keys()].filter((n) => RESIZES.includes(n)))) resize = resizeOf(name, modifiers.get(name)!) ?? resize;
  const enlarge = modifiers.has('enlarge');
  // The context modifiers are checked whether or not a resize uses them, as IPX applies each.
  const fitText = get('fit');
  if (fitText !== undefined && fitText !== '' && !(FITS as readonly string[]).includes(fitText)) throw invalidArg('fit', fitText, `one of: ${FITS.join(', ')}`);
  const positionText = get('pos', 'position');
  let position: string | undefined;
  if (positionText !== undefined && positionText !== '') {
    position = POSITIONS[positionText.replace('-', ' ')];
    if (!position) throw invalidArg('position', positionText, `one of: ${Object.keys(POSITIONS).filter((p) => !/^\d/.test(p)).join(', ')}`);
  }
  if (resize) {
    const size = { ...(resize.width ? { width: resize.width } : {}), ...(resize.height ? { height: resize.height } : {}) };
    if (!resize.box) operations.push({ resize: { ...size, fit: enlarge ? 'contain' : 'scale-down' } });
    else {
      const fit = fitText || 'cover';
      const gravity = position && position !== 'centre' ? { gravity: position } : {};
      const limit = enlarge ? {} : { enlarge: false };
      // Without enlarge IPX first shrinks the box to the image keeping its aspect: keepBoxAspect for
      // cover and fill; contain, inside and outside keep the box (docs/api.md says where they differ).
      const boxAspect = enlarge ? {} : { keepBoxAspect: true };
      if (fit === 'cover') operations.push({ resize: { ...size, fit: enlarge ? 'cover' : 'crop', ...gravity, ...boxAspect } });
      else if (fit === 'outside') operations.push({ resize: { ...size, fit: enlarge ? 'cover' : 'crop', ...gravity } });
      else if (fit === 'contain') operations.push({ resize: { ...size, fit: 'pad', ...limit, ...(position === 'attention' ? {} : gravity), background: bg ?? SHARP_BACKGROUND } });
      else if (fit === 'fill') operations.push({ resize: { ...size, fit: 'fill', ...limit, ...boxAspect } });
      else operations.push({ resize: { ...size, fit: enlarge ? 'contain' : 'scale-down' } });
    }
  }
  const extend = modifiers.get('extend');
  if (extend !== undefined) {
    const [top, right, bottom, left, extendWith] = extend.split('_');
    if (extendWith !== undefined && extendWith !== '' && extendWith !== 'background') throw invalidArg('extend.extendWith', extendWith, 'background (matte extends with a colour only)');
    const edge = (name: string, v: string | undefined) => number(`extend.${name}`, v, { min: 0, max: 10_000, integer: true }) ?? 0;
    const sides = { top: edge('top', top), right: edge('right', right), bottom: edge('bottom', bottom), left: edge('left', left) };
    if (Object.values(sides).some((v) => v > 0)) operations.push({ extend: { ...sides, background: bg ?? SHARP_BACKGROUND } });
  }
  if (modifiers.has('blur')) {
    // sharp's blur takes a sigma (none: a mild 3x3 blur); matte's blur a radius of twice it.
    const sigma = number('blur', modifiers.get('blur'), { min: 0.3, max: 1000 }) ?? 0.5;
    operations.push({ blur: sigma * 2 });
  }
  if (modifiers.has('sharpen')) {
    const [sigma, flat, jagged] = modifiers.get('sharpen')!.split('_');
    const s = number('sharpen.sigma', sigma, { min: 0.000_001, max: 10 });
    const f = number('sharpen.flat', flat, { min: 0 });
    const j = number('sharpen.jagged', jagged, { min: 0 });
    // sharp's sharpen() without a sigma is a fast, mild one: a small sigma here.
    operations.push({ sharpen: { sigma: s ?? 0.5, ...(f !== undefined ? { flat: f } : {}), ...(j !== undefined ? { jagged: j } : {}) } });
  }
  if (modifiers.has('modulate')) {
    const [brightness, saturation, hue, lightness] = modifiers.get('modulate')!.split('_');
    if ((hue ?? '') !== '' || (lightness ?? '') !== '') throw invalidArg('modulate', modifiers.get('modulate')!, 'brightness_saturation (matte has no hue or lightness shift)');
    const b = number('modulate.brightness', brightness, { min: 0 });
    const s = number('modulate.saturation', saturation, { min: 0 });
    if (b !== undefined && b !== 1) operations.push({ brightness: b });
    if (s !== undefined && s !== 1) operations.push({ saturation: s });
  }
  if (modifiers.has('grayscale')) operations.push({ saturation: 0 });
  if (modifiers.has('flatten')) operations.push({ background: bg ?? SHARP_BACKGROUND });
  const formatText = get('f', 'format');
  if (formatText !== undefined && formatText !== '' && !Object.hasOwn(FORMATS, formatText)) throw invalidArg('format', formatText, `one of: ${Object.keys(FORMATS).join(', ')}`);
  const format = formatText ? FORMATS[formatText]! : 'source';
  const quality = number('quality', get('q', 'quality'), { min: 1, max: 100, integer: true });
  // IPX keeps an animation only when asked (a_, animated) or written as GIF.
  const anim = modifiers.has('a') || modifiers.has('animated') || format === 'gif';
  return { operations, format, quality, anim };
}

/** IPX's status text of a matte error. */
function statusText(err: HttpError): string {
  switch (err.code) {
    case 'invalid_modifier':
    case 'invalid_operations':
      return 'IPX_INVALID_MODIFIER_ARG';
    case 'source_forbidden':
      return err.message.includes('MATTE_SOURCE_BASE') ? 'IPX_FORBIDDEN_PATH' : 'IPX_FORBIDDEN_HOST';
    case 'invalid_source':
    case 'missing_id':
      return 'IPX_MISSING_ID';
    case 'input_url_forbidden':
      return 'IPX_FORBIDDEN_HOST';
    case 'input_url_fetch_failed':
      return 'IPX_RESOURCE_NOT_FOUND';
    default:
      return 'IPX_ERROR';
  }
}

export function ipxDialect(config: DialectConfig): DialectParse {
  const cacheControl = `public, max-age=${config.dialectMaxAgeSeconds}`;
  return {
    name: 'ipx',
    prefix: IPX_PREFIX,
    parse(rawPath, query) {
      const [, modifiers = '', ...id] = rawPath.split('/');
      if (modifiers === '') throw new HttpError(400, 'invalid_modifier', `Modifiers are missing: ${rawPath}`);
      let source: string;
      try {
        source = decodeURIComponent(id.join('/')) + (query ? `?${query}` : '');
      } catch {
        throw new HttpError(400, 'missing_id', 'Resource id is not valid percent-encoding');
      }
      if (source === '' || source === '/') throw new HttpError(400, 'missing_id', `Resource id is missing: ${rawPath}`);
      return { source: /^https?:/i.test(source) ? source : `/${source.replace(/^\/+/, '')}`, ...ipxOperations(readIpxModifiers(modifiers)), cacheControl };
    },
    answerError(err) {
      const status = err.code === 'input_url_fetch_failed' ? 404 : err.status;
      return answerDialectError(err, { status, type: 'application/json; charset=utf-8', body: { error: { message: `[${status}] [${statusText(err)}] ${err.message}` } } });
    },
  };
}
