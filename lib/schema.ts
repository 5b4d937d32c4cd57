// The one schema of matte's inputs: the operation list and the form values of both endpoints.
// The library validates with it, the server validates form fields with it, and the OpenAPI
// document is generated from it, so the three cannot drift apart. The bounds the addon also checks
// are the addon's own (native/bounds.h), read here when the library loads.
import { z } from 'zod';
import { colourSchema, parseColor, type Rgba } from './color.js';
import { MatteError } from './errors.js';
import { addon } from './native.js';
import {
  cropSchema,
  cropStep,
  extendSchema,
  extendStep,
  gammaSchema,
  resizeExtensionFields,
  resizeExtensionStep,
  resizeFieldsProblem,
  sharpenSchema,
  sharpenStep,
  type ResizeExtension,
  type ResponsiveStep,
} from './responsive.js';
import { parseMargin, placeSchema, placeStep, roiSchema, roiStep, shadowSchema, shadowStep, sizeSchema, sizeStep, type StagingStep } from './staging.js';

const { bounds } = addon;

export const MAX_OPERATIONS = 20;
export const MAX_RESIZE_SIDE = bounds.maxResizeSide;
export const MAX_BLUR = bounds.maxBlurRadius;
/**
 * Largest brightness, contrast or saturation factor. At 255 a difference of one level already
 * spans the whole 0..255 range, so a larger factor changes nothing; the addon refuses larger ones.
 */
export const MAX_TONE_FACTOR = bounds.maxToneFactor;
/** The jpeg and webp quality's range. */
export const MIN_QUALITY = bounds.quality.min;
export const MAX_QUALITY = bounds.quality.max;

export const OUTPUT_FORMATS = ['png', 'webp', 'jpeg', 'gif', 'avif'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
export const MATTE_FORMATS = ['png', 'webp'] as const;
export type MatteFormat = (typeof MATTE_FORMATS)[number];
/** `auto`: PNG where the result has an alpha below 255, JPEG where it has none (the result's `format` says which). */
export const FORMAT_CHOICES = [...OUTPUT_FORMATS, 'auto'] as const;
export type FormatChoice = (typeof FORMAT_CHOICES)[number];
/** The formats a background removal can ask for (jpeg: flattened on white, or over its background). */
export const REMOVE_BACKGROUND_FORMATS = ['png', 'webp', 'jpeg', 'auto'] as const;
export type RemoveBackgroundFormat = (typeof REMOVE_BACKGROUND_FORMATS)[number];
/** The specification's four fits, and the extensions pad and fill (docs/api.md, "Extensions: responsive images"). */
export const FIT_MODES = ['contain', 'cover', 'scale-down', 'crop', 'pad', 'fill'] as const;
export type Fit = (typeof FIT_MODES)[number];

// ---- building blocks with the messages users read ------------------------------------------

const finiteNumber = () =>
  z.number({ error: 'must be a number' }).refine(Number.isFinite, { error: 'must be a finite number' });

const toneFactor = () =>
  finiteNumber()
    .refine((v) => v >= 0, { error: 'must be at least 0' })
    .refine((v) => v <= MAX_TONE_FACTOR, { error: `must be at most ${MAX_TONE_FACTOR}` });

const side = () =>
  z
    .number({ error: 'must be a number' })
    .int({ error: 'must be an integer' })
    .min(1, { error: 'must be at least 1' })
    .max(MAX_RESIZE_SIDE, { error: `must be at most ${MAX_RESIZE_SIDE}` });

const literalTrue = () => z.literal(true, { error: 'must be true' });

/** A model's registry name (which names are loaded is checked where the models are known). */
export const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const modelName = () =>
  z.string({ error: 'must be a model name' }).regex(MODEL_NAME, { error: 'must be a model name (letters, digits, . _ -)' });

const REMOVE_BACKGROUND_SETTINGS = 'must be true or an object with refine, model, tta, roi and/or semitransparency';

/** removeBackground's settings, in the operation and in the library's options. */
export const removeBackgroundSettingsSchema = z.strictObject(
  {
    /** Refine the matte at full resolution, guided by the image, and clean it (default true). */
    refine: z.boolean({ error: 'must be true or false' }).optional(),
    /** A registry name among the loaded models (default: the default model). */
    model: modelName().optional(),
    /** Test-time augmentation: average the matte of the image and of its mirror (default false). */
    tta: z.boolean({ error: 'must be true or false' }).optional(),
    /** Only what lies inside [x1, y1, x2, y2] (pixels or "N%") can be foreground. */
    roi: roiSchema.optional(),
    /** false: a hard matte, 0 or 255 with its edge antialiased by one pixel (default true). */
    semitransparency: z.boolean({ error: 'must be true or false' }).optional(),
  },
  { error: REMOVE_BACKGROUND_SETTINGS },
);
export type RemoveBackgroundSettings = z.infer<typeof removeBackgroundSettingsSchema>;

// ---- operations ------------------------------------------------------------------------------

/** The value schema of each operation key, in the order of docs/api.md's "Operations (edit)" table. */
export const operationValueSchemas = {
  resize: z
    .strictObject(
      {
        width: side().optional(),
        height: side().optional(),
        fit: z.enum(FIT_MODES, { error: `must be one of ${FIT_MODES.join(', ')}` }).optional(),
        // Extensions (lib/responsive.ts): gravity, enlarge, keepBoxAspect, background (pad's box), dpr.
        ...resizeExtensionFields,
      },
      { error: 'must be an object with width and/or height' },
    )
    .refine((r) => r.width !== undefined || r.height !== undefined, {
      error: 'needs width and/or height',
      abort: true,
    })
    .superRefine((r, ctx) => {
      const problem = resizeFieldsProblem(r);
      if (problem) ctx.addIssue({ code: 'custom', path: [problem[0]], message: problem[1] });
    }),
  rotate: z.union([z.literal(90), z.literal(180), z.literal(270)], { error: 'must be 90, 180 or 270' }),
  flip: z.enum(['h', 'v', 'hv'], { error: 'must be h, v or hv' }),
  blur: finiteNumber()
    .refine((v) => v >= 0, { error: 'must be at least 0' })
    .refine((v) => v <= MAX_BLUR, { error: `must be at most ${MAX_BLUR}` }),
  brightness: toneFactor(),
  contrast: toneFactor(),
  saturation: toneFactor(),
  background: colourSchema(),
  removeBackground: z.union([literalTrue(), removeBackgroundSettingsSchema], { error: REMOVE_BACKGROUND_SETTINGS }),
  trim: literalTrue(),
  // Extensions beside the specification's ten: the staged cut-outs (lib/staging.ts).
  size: sizeSchema,
  shadow: shadowSchema,
  backgroundImage: literalTrue(),
  place: placeSchema,
  // Extensions beside the specification's ten: responsive images (lib/responsive.ts).
  sharpen: sharpenSchema,
  gamma: gammaSchema,
  extend: extendSchema,
  crop: cropSchema,
} as const;

/** The operations of the specification; the others are extensions (docs/api.md, "Extensions: staged cut-outs", "Extensions: responsive images"). */
export const SPECIFICATION_OPERATIONS = ['resize', 'rotate', 'flip', 'blur', 'brightness', 'contrast', 'saturation', 'background', 'removeBackground', 'trim'] as const;

export type OperationName = keyof typeof operationValueSchemas;
export const OPERATION_NAMES = Object.keys(operationValueSchemas) as OperationName[];

/** One operation as users write it: an object with exactly one key. */
export type Operation = {
  [K in OperationName]: { [P in K]: z.input<(typeof operationValueSchemas)[K]> };
}[OperationName];

/** The schema of one operation (used for the OpenAPI document and for typing). */
export const operationSchema = z.union(
  OPERATION_NAMES.map((name) => z.strictObject({ [name]: operationValueSchemas[name] })) as unknown as [
    z.ZodTypeAny,
    z.ZodTypeAny,
    ...z.ZodTypeAny[],
  ],
);

export const operationsSchema = z.array(operationSchema).min(1).max(MAX_OPERATIONS);

/**
 * A validated step, normalised for the addon: defaults filled in, colours parsed to RGBA.
 * This is the trusted plan format of native/plan.h.
 */
export type Step =
  | ({ op: 'resize'; width?: number; height?: number; fit: Fit } & ResizeExtension)
  | { op: 'rotate'; angle: 90 | 180 | 270 }
  | { op: 'flip'; direction: 'h' | 'v' | 'hv' }
  | { op: 'blur'; radius: number }
  | { op: 'brightness'; value: number }
  | { op: 'contrast'; value: number }
  | { op: 'saturation'; value: number }
  | { op: 'background'; rgba: Rgba }
  /**
   * refine, tta, semitransparency: undefined means the default (true, false, true); model: undefined
   * means the default model; roi: the region's edges (roiPercent: 1 for a percentage), in the
   * image's pixels at this step, or with roiOfInput in the input's.
   */
  | { op: 'removeBackground'; refine?: boolean; tta?: boolean; model?: string; roi?: number[]; roiPercent?: number[]; roiOfInput?: boolean; semitransparency?: boolean }
  | { op: 'trim' }
  /**
   * Internal: the remove-background endpoint's crop to the bounding box of alpha > 0. Its margin is
   * the same on every side, or (the remove.bg route's crop_margin) one a side, top, right, bottom,
   * left: pixels plus a percentage of the box's width (left, right) or height (top, bottom).
   */
  | { op: 'trimTransparent'; marginPixels?: number; marginPercent?: number; marginSides?: Sides; marginPercentSides?: Sides }
  /** Internal: the remove-background endpoint's `channels: 'alpha'`, the matte alone. */
  | { op: 'extractAlpha' }
  /** Internal: the remove.bg route's zip, the colour bands alone (alpha dropped, not flattened). */
  | { op: 'extractColour' }
  | StagingStep
  | ResponsiveStep;

/** Four values, one a side: top, right, bottom, left (CSS's order). */
export type Sides = [number, number, number, number];

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : `${acc}.${String(key)}`),
    'operations',
  );
}

function invalid(path: readonly PropertyKey[], message: string): MatteError {
  const where = formatPath(path);
  return new MatteError('invalid_operations', `${where} ${message}`, where);
}

function toStep(name: OperationName, value: any): Step {
  switch (name) {
    case 'resize':
    {
      const fit: Fit = value.fit ?? 'contain';
      return { op: 'resize', width: value.width, height: value.height, fit, ...resizeExtensionStep({ ...value, fit }) };
    }
    case 'rotate':
      return { op: 'rotate', angle: value };
    case 'flip':
      return { op: 'flip', direction: value };
    case 'blur':
      return { op: 'blur', radius: value };
    case 'brightness':
    case 'contrast':
    case 'saturation':
      return { op: name, value };
    case 'background':
      return { op: 'background', rgba: parseColor(value)! };
    case 'removeBackground':
      return removeBackgroundStep(value === true ? {} : value);
    case 'trim':
      return { op: 'trim' };
    case 'size':
      return sizeStep(value);
    case 'shadow':
      return shadowStep(value);
    case 'backgroundImage':
      return { op: 'backgroundImage' };
    case 'place':
      return placeStep(value);
    case 'sharpen':
      return sharpenStep(value);
    case 'gamma':
      return { op: 'gamma', value };
    case 'extend':
      return extendStep(value);
    case 'crop':
      return cropStep(value);
  }
}

/** removeBackground's step: only the settings given (`true` is { op: 'removeBackground' }), the defaults applied later. */
export function removeBackgroundStep(settings: RemoveBackgroundSettings): Extract<Step, { op: 'removeBackground' }> {
  const { roi, ...rest } = settings;
  return { op: 'removeBackground', ...rest, ...(roi ? roiStep(roi) : {}) };
}

/**
 * Validates an operation list (already JSON-decoded) and returns the normalised steps.
 * Throws MatteError `invalid_operations` whose `path` points at the offending value,
 * e.g. `operations[3].resize.width`.
 */
export function parseOperations(operations: unknown): Step[] {
  if (!Array.isArray(operations)) throw invalid([], 'must be a JSON array');
  if (operations.length < 1) throw invalid([], 'must hold at least 1 operation');
  if (operations.length > MAX_OPERATIONS) throw invalid([], `must hold at most ${MAX_OPERATIONS} operations`);
  const steps: Step[] = [];
  // removeBackground (one matte a job) and backgroundImage (one background image a request).
  const onceAt = new Map<string, number>();
  operations.forEach((entry, index) => {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      throw invalid([index], 'must be an object with exactly one operation key');
    }
    const keys = Object.keys(entry);
    if (keys.length !== 1) {
      throw invalid([index], `must have exactly one key (one of ${OPERATION_NAMES.join(', ')}), got ${keys.length}`);
    }
    const name = keys[0] as OperationName;
    if (!Object.hasOwn(operationValueSchemas, name)) {
      throw invalid([index], `has an unknown operation "${keys[0]}" (one of ${OPERATION_NAMES.join(', ')})`);
    }
    const result = operationValueSchemas[name].safeParse((entry as Record<string, unknown>)[name]);
    if (!result.success) {
      const issue = result.error.issues[0]!;
      throw invalid([index, name, ...issue.path], issue.message);
    }
    if (name === 'removeBackground' || name === 'backgroundImage') {
      const at = onceAt.get(name);
      if (at !== undefined) throw invalid([index, name], `may appear only once (already at operations[${at}])`);
      onceAt.set(name, index);
    }
    steps.push(toStep(name, result.data));
  });
  return steps;
}

/** Parses the `operations` form field: a JSON string holding the array. */
export function parseOperationsJson(text: string): Step[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new MatteError('invalid_json', `operations is not valid JSON: ${(err as Error).message}`, 'operations');
  }
  return parseOperations(value);
}

// ---- form values (multipart fields are strings) -----------------------------------------------

const fieldError = (field: string, message: string) => new MatteError('invalid_field', `${field} ${message}`, field);

/** `true`/`false`/`1`/`0`, case-insensitive. */
export function parseBooleanField(field: string, text: string): boolean {
  const lower = text.trim().toLowerCase();
  if (lower === 'true' || lower === '1') return true;
  if (lower === 'false' || lower === '0') return false;
  throw fieldError(field, 'must be true, false, 1 or 0');
}

/** The `model` form field: a model name (which names are loaded is checked by the server). */
export function parseModelField(text: string): string {
  const value = text.trim();
  if (!MODEL_NAME.test(value)) throw fieldError('model', 'must be a model name (letters, digits, . _ -)');
  return value;
}

/** A decimal integer 1..100. */
export function parseQualityField(text: string): number {
  const message = `must be a whole number from ${MIN_QUALITY} to ${MAX_QUALITY}`;
  if (!/^\s*\d{1,3}\s*$/.test(text)) throw fieldError('quality', message);
  const value = Number(text);
  if (value < MIN_QUALITY || value > MAX_QUALITY) throw fieldError('quality', message);
  return value;
}

export function parseEnumField<T extends string>(field: string, allowed: readonly T[], text: string): T {
  const value = text.trim().toLowerCase();
  if (!(allowed as readonly string[]).includes(value)) throw fieldError(field, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** What the remove-background endpoint returns: the cut-out, or its matte alone. */
export const CHANNELS = ['rgba', 'alpha'] as const;
export type Channels = (typeof CHANNELS)[number];

export const MAX_TRIM_MARGIN_PIXELS = bounds.maxTrimMarginPixels;
export const MAX_TRIM_MARGIN_PERCENT = bounds.maxTrimMarginPercent;
/** A margin around the trimmed subject: pixels a side, or a percentage of the subject's box. */
export type TrimMargin = { pixels: number } | { percent: number };

/**
 * `30` (pixels) or `10%` (of the subject's box: of its width left and right, of its height above
 * and below); a number is pixels. Returns the message of what is wrong, or the margin.
 */
export function parseTrimMargin(value: unknown): TrimMargin | string {
  return parseMargin(value, MAX_TRIM_MARGIN_PIXELS, MAX_TRIM_MARGIN_PERCENT, "the subject's box");
}

/** The `trim_margin` form field. */
export function parseTrimMarginField(text: string): TrimMargin {
  const margin = parseTrimMargin(text);
  if (typeof margin === 'string') throw fieldError('trim_margin', margin);
  return margin;
}

/** The steps after removeBackground of the remove-background endpoint: trim (with its margin), then the mask. */
export function removeBackgroundTail(trim: boolean, margin: TrimMargin | undefined, channels: Channels): Step[] {
  const steps: Step[] = [];
  if (trim) {
    const m = margin === undefined ? {} : 'pixels' in margin ? { marginPixels: margin.pixels } : { marginPercent: margin.percent };
    steps.push({ op: 'trimTransparent', ...m });
  }
  if (channels === 'alpha') steps.push({ op: 'extractAlpha' });
  return steps;
}

export const OUTPUT_MODES = ['url', 'raw'] as const;
export type OutputMode = (typeof OUTPUT_MODES)[number];

/** The option schemas of the library API (same ranges as the form fields). */
export const editOptionsSchema = z.strictObject({
  format: z.enum(FORMAT_CHOICES, { error: `must be one of ${FORMAT_CHOICES.join(', ')}` }).optional(),
  quality: z.number().int().min(MIN_QUALITY).max(MAX_QUALITY).optional(),
  anim: z.boolean().optional(),
});
export const removeBackgroundOptionsSchema = z.strictObject({
  format: z.enum(REMOVE_BACKGROUND_FORMATS, { error: `must be one of ${REMOVE_BACKGROUND_FORMATS.join(', ')}` }).optional(),
  trim: z.boolean().optional(),
  /** Only with trim: true. */
  trimMargin: z.union([z.number(), z.string()]).optional(),
  channels: z.enum(CHANNELS, { error: `must be one of ${CHANNELS.join(', ')}` }).optional(),
  anim: z.boolean().optional(),
  ...removeBackgroundSettingsSchema.shape,
  // The staging after the cut-out (docs/api.md, "Extensions: staged cut-outs"); backgroundImage is an input, apart.
  size: sizeSchema.optional(),
  background: operationValueSchemas.background.optional(),
  shadow: shadowSchema.optional(),
  place: placeSchema.optional(),
});

/** JPEG's and WebP's default quality. */
export const DEFAULT_QUALITY = bounds.quality.default;
/**
 * The quality each lossy format is encoded at when none is given (docs/api.md, "Extensions:
 * responsive images"): JPEG and WebP 80, AVIF 60 on libheif's scale (sharp's and libvips' Q).
 */
export const DEFAULT_QUALITIES = { jpeg: DEFAULT_QUALITY, webp: DEFAULT_QUALITY, avif: bounds.avifQuality } as const;

export const MEDIA_TYPES: Record<OutputFormat, string> = {
  png: 'image/png',
  webp: 'image/webp',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  avif: 'image/avif',
};
