// The staged cut-outs (docs/api.md, "Extensions: staged cut-outs"): the value schemas of the
// operations `size`, `shadow`, `backgroundImage` and `place`, removeBackground's `roi` and
// `semitransparency`, their steps for the addon, and their form values. lib/schema.ts lists them
// beside the specification's ten operations; the bounds are the addon's (native/bounds.h).
import { z } from 'zod';
import { colourSchema, parseColor, type Rgba } from './color.js';
import { MatteError } from './errors.js';
import { addon } from './native.js';

const { bounds } = addon;

export const MIN_MEGAPIXELS = bounds.minMegapixels;
export const MAX_MEGAPIXELS = bounds.maxMegapixels;
export const MAX_SHADOW_BLUR = bounds.maxShadowBlur;
export const MAX_SHADOW_OFFSET = bounds.maxShadowOffset;
export const MIN_PLACE_SCALE = bounds.minPlaceScale;
export const MAX_PLACE_SCALE = bounds.maxPlaceScale;
export const MAX_PLACE_MARGIN_PIXELS = bounds.maxPlaceMarginPixels;
export const MAX_PLACE_MARGIN_PERCENT = bounds.maxPlaceMarginPercent;
export const MAX_ASPECT_TERM = bounds.maxAspectTerm;
export const MAX_ROI_PIXELS = bounds.maxRoiPixels;

/** remove.bg's output sizes: a cap in megapixels (full and auto: none, the image's own size). */
export const SIZE_NAMES = ['preview', 'medium', 'hd', 'full', 'auto'] as const;
export type SizeName = (typeof SIZE_NAMES)[number];
export const SIZE_MEGAPIXELS: Record<SizeName, number | undefined> = { preview: 0.25, medium: 1.5, hd: 4, full: undefined, auto: undefined };

export const SHADOW_TYPES = ['drop', 'contact'] as const;
export type ShadowType = (typeof SHADOW_TYPES)[number];
/** A shadow's opacity and colour when none is given; its blur and offsets then scale with the subject (native/steps/shadow.cc). */
export const DEFAULT_SHADOW_OPACITY: Record<ShadowType, number> = { drop: 0.5, contact: 0.6 };
export const DEFAULT_SHADOW_COLOR = 'black';

export const PLACE_POSITIONS = ['center', 'original'] as const;

// ---- building blocks -------------------------------------------------------------------------

const ranged = (min: number, max: number, what = 'a number') =>
  z
    .number({ error: `must be ${what}` })
    .refine(Number.isFinite, { error: 'must be a finite number', abort: true })
    .refine((v) => v >= min, { error: `must be at least ${min}`, abort: true })
    .refine((v) => v <= max, { error: `must be at most ${max}` });


/** A margin: whole pixels (`30`) or a percentage with up to two decimals (`'10%'`). */
export type Margin = { pixels: number } | { percent: number };

/**
 * `30` (pixels) or `10%` (a percentage of `of`); a number is pixels. Returns the message of what is
 * wrong, or the margin. The text is bounded before the pattern runs: at most 8 characters.
 */
export function parseMargin(value: unknown, maxPixels: number, maxPercent: number, of: string): Margin | string {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : undefined;
  const message = `must be whole pixels 0..${maxPixels} (e.g. 30) or a percentage 0..${maxPercent} of ${of} (e.g. 10%)`;
  if (text === undefined || text.length > 8) return message;
  const match = /^(\d{1,4})(?:(\.\d{1,2})?%)?$/.exec(text);
  if (!match) return message;
  if (text.endsWith('%')) {
    const percent = Number(match[1]! + (match[2] ?? ''));
    return percent <= maxPercent ? { percent } : message;
  }
  const pixels = Number(match[1]);
  return pixels <= maxPixels ? { pixels } : message;
}

// ---- size --------------------------------------------------------------------------------------

export const sizeSchema = z.union(
  [
    z.enum(SIZE_NAMES),
    z.strictObject({ megapixels: ranged(MIN_MEGAPIXELS, MAX_MEGAPIXELS) }, { error: `must be an object with megapixels` }),
  ],
  { error: `must be one of ${SIZE_NAMES.join(', ')}, or {"megapixels": n} with n from ${MIN_MEGAPIXELS} to ${MAX_MEGAPIXELS}` },
);
export type SizeValue = z.input<typeof sizeSchema>;

/** The megapixels of a size value, undefined for none. */
export function megapixelsOf(value: SizeValue): number | undefined {
  return typeof value === 'string' ? SIZE_MEGAPIXELS[value] : value.megapixels;
}

/** The `size` form field: a name, or a number of megapixels. */
export function parseSizeField(text: string, field = 'size'): SizeValue {
  const value = text.trim().toLowerCase();
  if ((SIZE_NAMES as readonly string[]).includes(value)) return value as SizeName;
  const message = `must be one of ${SIZE_NAMES.join(', ')}, or a number of megapixels from ${MIN_MEGAPIXELS} to ${MAX_MEGAPIXELS}`;
  if (!/^\d{1,3}(\.\d{1,6})?$/.test(value)) throw new MatteError('invalid_field', `${field} ${message}`, field);
  const megapixels = Number(value);
  if (megapixels < MIN_MEGAPIXELS || megapixels > MAX_MEGAPIXELS) throw new MatteError('invalid_field', `${field} ${message}`, field);
  return { megapixels };
}

// ---- shadow ------------------------------------------------------------------------------------

export const shadowSettingsSchema = z.strictObject(
  {
    type: z.enum(SHADOW_TYPES, { error: `must be one of ${SHADOW_TYPES.join(', ')}` }).optional(),
    opacity: ranged(0, 1).optional(),
    blur: ranged(0, MAX_SHADOW_BLUR).optional(),
    offsetX: ranged(-MAX_SHADOW_OFFSET, MAX_SHADOW_OFFSET).optional(),
    offsetY: ranged(-MAX_SHADOW_OFFSET, MAX_SHADOW_OFFSET).optional(),
    color: colourSchema().optional(),
  },
  { error: 'must be true or an object with type, opacity, blur, offsetX, offsetY and/or color' },
);
export const shadowSchema = z.union([z.literal(true, { error: 'must be true' }), shadowSettingsSchema], {
  error: 'must be true or an object with type, opacity, blur, offsetX, offsetY and/or color',
});
export type ShadowValue = z.input<typeof shadowSchema>;

/** The `shadow` form field: `true`/`false`/`1`/`0`, `drop`, `contact`, or the operation's JSON object. */
export function parseShadowField(text: string, field = 'shadow'): ShadowValue | undefined {
  const value = text.trim();
  const lower = value.toLowerCase();
  if (lower === 'false' || lower === '0') return undefined;
  if (lower === 'true' || lower === '1') return true;
  if ((SHADOW_TYPES as readonly string[]).includes(lower)) return { type: lower as ShadowType };
  return parseJsonField(field, value, shadowSchema, 'true, false, drop, contact or a JSON object with type, opacity, blur, offsetX, offsetY and/or color');
}

// ---- place ---------------------------------------------------------------------------------------

const aspectRatio = () =>
  z
    .string({ error: 'must be a ratio such as "1:1" or "4:5"' })
    .max(16, { error: 'must be a ratio such as "1:1" or "4:5"', abort: true })
    .regex(/^\s*\d{1,3}\s*:\s*\d{1,3}\s*$/, { error: 'must be a ratio such as "1:1" or "4:5"', abort: true })
    .refine((v) => v.split(':').every((t) => Number(t) >= 1 && Number(t) <= MAX_ASPECT_TERM), { error: `must have whole terms from 1 to ${MAX_ASPECT_TERM}` });

const placeMargin = () =>
  z.union([z.number(), z.string()], { error: 'must be whole pixels or a percentage such as "10%"' }).superRefine((v, ctx) => {
    const margin = parseMargin(v, MAX_PLACE_MARGIN_PIXELS, MAX_PLACE_MARGIN_PERCENT, "the canvas's side");
    if (typeof margin === 'string') ctx.addIssue({ code: 'custom', message: margin });
  });

export const placeSchema = z
  .strictObject(
    {
      /** The subject's box takes this share (percent) of the room's limiting side. */
      scale: ranged(MIN_PLACE_SCALE, MAX_PLACE_SCALE).optional(),
      position: z
        .union([z.enum(PLACE_POSITIONS), z.strictObject({ x: ranged(0, 100), y: ranged(0, 100) })], {
          error: 'must be center, original or {"x": 0..100, "y": 0..100} (percent of the free space)',
        })
        .optional(),
      aspectRatio: aspectRatio().optional(),
      margin: placeMargin().optional(),
    },
    { error: 'must be an object with scale, position, aspectRatio and/or margin' },
  )
  .refine((p) => Object.keys(p).length > 0, { error: 'needs scale, position, aspectRatio and/or margin' });
export type PlaceValue = z.input<typeof placeSchema>;

// ---- removeBackground's region of interest -------------------------------------------------------

const PERCENT = /^(\d{1,3}(?:\.\d{1,2})?)%$/;
const ROI_EDGE = `must be whole pixels 0..${MAX_ROI_PIXELS} or a percentage 0..100 such as "25%"`;
const roiEdge = () =>
  z.union([z.number(), z.string()], { error: ROI_EDGE }).superRefine((v, ctx) => {
    const fine = typeof v === 'number' ? Number.isInteger(v) && v >= 0 && v <= MAX_ROI_PIXELS : v.length <= 8 && PERCENT.test(v) && Number(v.slice(0, -1)) <= 100;
    if (!fine) ctx.addIssue({ code: 'custom', message: ROI_EDGE });
  });

/** [x1, y1, x2, y2]: the region's left, top, right and bottom edges, in pixels or in % of the width (x) and height (y). */
export const roiSchema = z
  .tuple([roiEdge(), roiEdge(), roiEdge(), roiEdge()], { error: 'must be [x1, y1, x2, y2]: pixels or percentages such as "25%"' })
  .superRefine((roi, ctx) => {
    // Which edges can be compared before the image's size is known: those in the same units.
    for (const [a, b, name] of [[0, 2, 'x2 must be right of x1'], [1, 3, 'y2 must be below y1']] as const) {
      const [first, second] = [roi[a], roi[b]];
      if (typeof first === typeof second && edgeValue(second) <= edgeValue(first)) ctx.addIssue({ code: 'custom', message: `is empty: ${name}`, path: [] });
    }
  });
export type RoiValue = z.input<typeof roiSchema>;

function edgeValue(edge: number | string): number {
  return typeof edge === 'number' ? edge : Number(edge.slice(0, -1));
}

/** The region as the addon reads it: the four values, and which are percentages. */
export function roiStep(roi: RoiValue): { roi: number[]; roiPercent: number[] } {
  return { roi: roi.map(edgeValue), roiPercent: roi.map((e) => (typeof e === 'string' ? 1 : 0)) };
}

/** The `roi` form field: `x1 y1 x2 y2` (spaces or commas), each whole pixels (`120` or `120px`) or a percentage (`25%`). */
export function parseRoiField(text: string, field = 'roi'): RoiValue {
  const message = `${field} must be "x1 y1 x2 y2": whole pixels (120 or 120px) or percentages (25%), x2 right of x1 and y2 below y1`;
  if (text.length > 80) throw new MatteError('invalid_field', message, field);
  const parts = text.trim().split(/[\s,]+/);
  if (parts.length !== 4) throw new MatteError('invalid_field', message, field);
  const values = parts.map((p) => (/^\d{1,7}(px)?$/i.test(p) ? Number(p.replace(/px$/i, '')) : p));
  const result = roiSchema.safeParse(values);
  if (!result.success) throw new MatteError('invalid_field', `${field} ${result.error.issues[0]!.message}`, field);
  return result.data;
}

// ---- form values as JSON ---------------------------------------------------------------------------

/** A form field holding an operation's JSON value, validated by its schema (400 invalid_field at the field). */
export function parseJsonField<T>(field: string, text: string, schema: z.ZodType<T>, expected: string): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new MatteError('invalid_field', `${field} must be ${expected}`, field);
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = [field, ...issue.path.map(String)].join('.');
    throw new MatteError('invalid_field', `${path} ${issue.message}`, field);
  }
  return result.data;
}

/** The `place` form field: the operation's JSON object, e.g. {"scale": 80, "aspectRatio": "1:1"}. */
export function parsePlaceField(text: string, field = 'place'): PlaceValue {
  return parseJsonField(field, text, placeSchema, 'a JSON object with scale, position, aspectRatio and/or margin');
}

// ---- steps ---------------------------------------------------------------------------------------

export type StagingStep =
  /** megapixels: undefined is no cap (full, auto). */
  | { op: 'size'; megapixels?: number }
  /** blur, offsetX, offsetY: undefined means the default, which scales with the subject's box. */
  | { op: 'shadow'; type: ShadowType; opacity: number; rgba: Rgba; blur?: number; offsetX?: number; offsetY?: number }
  | { op: 'backgroundImage' }
  /** x, y: percent of the free space (undefined: the original place); margin in pixels or percent of the canvas's sides. */
  | { op: 'place'; scale?: number; x?: number; y?: number; aspectWidth?: number; aspectHeight?: number; marginPixels?: number; marginPercent?: number };

export function sizeStep(value: SizeValue): StagingStep {
  const megapixels = megapixelsOf(value);
  return megapixels === undefined ? { op: 'size' } : { op: 'size', megapixels };
}

export function shadowStep(value: ShadowValue): StagingStep {
  const settings = value === true ? {} : value;
  const type = settings.type ?? 'drop';
  const step: StagingStep = { op: 'shadow', type, opacity: settings.opacity ?? DEFAULT_SHADOW_OPACITY[type], rgba: parseColor(settings.color ?? DEFAULT_SHADOW_COLOR)! };
  if (settings.blur !== undefined) step.blur = settings.blur;
  if (settings.offsetX !== undefined) step.offsetX = settings.offsetX;
  if (settings.offsetY !== undefined) step.offsetY = settings.offsetY;
  return step;
}

export function placeStep(value: PlaceValue): StagingStep {
  const step: Extract<StagingStep, { op: 'place' }> = { op: 'place' };
  if (value.scale !== undefined) step.scale = value.scale;
  // remove.bg's rule: a scale without a position centres the subject.
  const position = value.position ?? (value.scale !== undefined ? 'center' : 'original');
  if (position === 'center') Object.assign(step, { x: 50, y: 50 });
  else if (typeof position === 'object') Object.assign(step, { x: position.x, y: position.y });
  if (value.aspectRatio !== undefined) {
    const [w, h] = value.aspectRatio.split(':').map((t) => Number(t.trim()));
    Object.assign(step, { aspectWidth: w, aspectHeight: h });
  }
  if (value.margin !== undefined) {
    const margin = parseMargin(value.margin, MAX_PLACE_MARGIN_PIXELS, MAX_PLACE_MARGIN_PERCENT, "the canvas's side") as Margin;
    if ('pixels' in margin) step.marginPixels = margin.pixels;
    else step.marginPercent = margin.percent;
  }
  return step;
}
