// What responsive images need (docs/api.md, "Extensions: responsive images"): resize's gravity,
// enlarge, keepBoxAspect, pad background and device-pixel ratio, and the operations sharpen, gamma,
// extend and crop, as value schemas and as the steps the addon reads. lib/schema.ts lists them beside the
// specification's ten operations; the bounds are the addon's (native/bounds.h).
import { z } from 'zod';
import { colourSchema, parseColor, type Rgba } from './color.js';
import { addon } from './native.js';

const { bounds } = addon;

export const MIN_DPR = bounds.minDpr;
export const MAX_DPR = bounds.maxDpr;
export const MAX_SHARPEN_SIGMA = bounds.maxSharpenSigma;
export const MAX_SHARPEN_AMOUNT = bounds.maxSharpenAmount;
/** vips_sharpen's own defaults for flat (m1) and jagged (m2) areas. */
export const DEFAULT_SHARPEN_FLAT = bounds.defaultSharpenFlat;
export const DEFAULT_SHARPEN_JAGGED = bounds.defaultSharpenJagged;
export const MIN_GAMMA = bounds.minGamma;
export const MAX_GAMMA = bounds.maxGamma;
/** extend's and crop's pixels a side. */
export const MAX_EDGE_PIXELS = bounds.maxEdgePixels;

/** The compass points: which edge or corner of the image a window keeps (cover, crop) or the image takes in its box (pad). */
export const COMPASS_GRAVITIES = ['centre', 'center', 'north', 'northeast', 'east', 'southeast', 'south', 'southwest', 'west', 'northwest'] as const;
export type CompassGravity = (typeof COMPASS_GRAVITIES)[number];
/** subject: the window keeping the most of the subject's matte; attention: libvips' saliency (no model). */
export const GRAVITIES = [...COMPASS_GRAVITIES, 'subject', 'attention'] as const;
export type GravityName = (typeof GRAVITIES)[number];
export type Gravity = GravityName | { x: number; y: number };

/** The fits that keep a window of the image (gravity chooses it) and the one that places the image in a box. */
export const WINDOW_FITS = ['cover', 'crop'] as const;
/** The fits that may go past the source's size unless `enlarge` says otherwise. */
export const ENLARGING_FITS = ['contain', 'cover', 'pad', 'fill'] as const;

// ---- building blocks -------------------------------------------------------------------------

// No `abort`: a union reads an aborted check as the wrong type and answers with its own message,
// where the first issue (which users see) is already the one that matters.
const ranged = (min: number, max: number) =>
  z
    .number({ error: 'must be a number' })
    .refine(Number.isFinite, { error: 'must be a finite number' })
    .refine((v) => v >= min, { error: `must be at least ${min}` })
    .refine((v) => v <= max, { error: `must be at most ${max}` });

const edgePixels = () =>
  z
    .number({ error: 'must be a number' })
    .int({ error: 'must be an integer' })
    .min(0, { error: 'must be at least 0' })
    .max(MAX_EDGE_PIXELS, { error: `must be at most ${MAX_EDGE_PIXELS}` });

// ---- resize's new fields ---------------------------------------------------------------------

const GRAVITY_MESSAGE = `must be one of ${GRAVITIES.join(', ')}, or a focal point {"x": 0..1, "y": 0..1}`;

export const gravitySchema = z.union(
  [
    z.enum(GRAVITIES, { error: GRAVITY_MESSAGE }),
    z.strictObject({ x: ranged(0, 1), y: ranged(0, 1) }, { error: GRAVITY_MESSAGE }),
  ],
  { error: GRAVITY_MESSAGE },
);

/** resize's fields beyond width, height and fit (lib/schema.ts joins them). */
export const resizeExtensionFields = {
  gravity: gravitySchema.optional(),
  enlarge: z.boolean({ error: 'must be true or false' }).optional(),
  keepBoxAspect: z.boolean({ error: 'must be true or false' }).optional(),
  background: colourSchema().optional(),
  dpr: ranged(MIN_DPR, MAX_DPR).optional(),
};

/** What resize's step carries beyond width, height and fit; each absent when it is the default. */
export interface ResizeExtension {
  /** A compass point other than the centre, subject, attention, or `focus` (then `focus` holds x and y). */
  gravity?: Exclude<CompassGravity, 'centre' | 'center'> | 'subject' | 'attention' | 'focus';
  focus?: [number, number];
  /** Given only where it differs from the fit's default (ENLARGING_FITS). */
  enlarge?: boolean;
  /** Without enlarging, a box larger than the image is first shrunk into it keeping its aspect (cover, crop, fill). */
  keepBoxAspect?: boolean;
  /** pad's background (default transparent). */
  rgba?: Rgba;
  dpr?: number;
  /** With gravity subject: the model it runs (the server names the job's; the library's default otherwise). */
  model?: string;
}

/** The fits keepBoxAspect applies to: those whose result is the box (or a window of it). */
export const BOX_ASPECT_FITS = ['cover', 'crop', 'fill'] as const;

/** Whether a resize of this fit may enlarge: `enlarge` as given, else the fit's default. */
const enlarges = (fit: string, enlarge: boolean | undefined) => enlarge ?? (ENLARGING_FITS as readonly string[]).includes(fit);

/** The rules between resize's fields, as [path, message] of the first broken one. */
export function resizeFieldsProblem(r: { width?: number; height?: number; fit?: string; gravity?: Gravity; enlarge?: boolean; keepBoxAspect?: boolean; background?: string }): [string, string] | undefined {
  if (r.fit === 'pad' && (r.width === undefined || r.height === undefined)) return ['fit', 'pad needs both width and height (the box the image is placed in)'];
  if (r.fit === 'pad' && (r.gravity === 'subject' || r.gravity === 'attention')) return ['gravity', `${r.gravity} chooses a window of the image; with fit pad, gravity places the image in its box: a compass point or {"x", "y"}`];
  if (r.keepBoxAspect) {
    const fit = r.fit ?? 'contain';
    if (!(BOX_ASPECT_FITS as readonly string[]).includes(fit)) return ['keepBoxAspect', `applies to the fits ${BOX_ASPECT_FITS.join(', ')} (the box's aspect is the result's), not ${fit}`];
    if (r.width === undefined || r.height === undefined) return ['keepBoxAspect', 'needs both width and height (the box whose aspect is kept)'];
    if (enlarges(fit, r.enlarge)) return ['keepBoxAspect', `applies only without enlarging: give enlarge: false${fit === 'crop' ? '' : ` (${fit} enlarges by default)`}`];
  }
  if (r.background !== undefined && r.fit !== 'pad') return ['background', 'is the colour of the box of fit pad (give fit: "pad", or use the background operation)'];
  return undefined;
}

/** resize's extension fields as its step holds them (defaults left out, so a plain resize's step is as before). */
export function resizeExtensionStep(r: { fit: string; gravity?: Gravity; enlarge?: boolean; keepBoxAspect?: boolean; background?: string; dpr?: number }): ResizeExtension {
  const out: ResizeExtension = {};
  // Gravity means something only where a window is kept or the image is placed in a box.
  const placed = (WINDOW_FITS as readonly string[]).includes(r.fit) || r.fit === 'pad';
  const g = r.gravity;
  if (placed && g !== undefined && g !== 'centre' && g !== 'center') {
    if (typeof g === 'object') Object.assign(out, { gravity: 'focus', focus: [g.x, g.y] });
    else out.gravity = g;
  }
  const enlarging = (ENLARGING_FITS as readonly string[]).includes(r.fit);
  if (r.enlarge !== undefined && r.enlarge !== enlarging) out.enlarge = r.enlarge;
  if (r.keepBoxAspect) out.keepBoxAspect = true;
  if (r.fit === 'pad' && r.background !== undefined) out.rgba = parseColor(r.background)!;
  if (r.dpr !== undefined && r.dpr !== 1) out.dpr = r.dpr;
  return out;
}

// ---- sharpen, gamma, extend, crop --------------------------------------------------------------

const SHARPEN_MESSAGE = `must be a number 0..${MAX_SHARPEN_SIGMA} or {"sigma": 0..${MAX_SHARPEN_SIGMA}, "flat"?: 0..${MAX_SHARPEN_AMOUNT}, "jagged"?: 0..${MAX_SHARPEN_AMOUNT}}`;

export const sharpenSchema = z.union(
  [
    ranged(0, MAX_SHARPEN_SIGMA),
    z.strictObject(
      { sigma: ranged(0, MAX_SHARPEN_SIGMA), flat: ranged(0, MAX_SHARPEN_AMOUNT).optional(), jagged: ranged(0, MAX_SHARPEN_AMOUNT).optional() },
      { error: SHARPEN_MESSAGE },
    ),
  ],
  { error: SHARPEN_MESSAGE },
);
export type SharpenValue = z.input<typeof sharpenSchema>;

export const gammaSchema = ranged(MIN_GAMMA, MAX_GAMMA);

const SIDES = ['top', 'right', 'bottom', 'left'] as const;
const atLeastOneSide = (v: Partial<Record<(typeof SIDES)[number], number>>) => SIDES.some((s) => v[s] !== undefined);

export const extendSchema = z
  .strictObject(
    { top: edgePixels().optional(), right: edgePixels().optional(), bottom: edgePixels().optional(), left: edgePixels().optional(), background: colourSchema().optional() },
    { error: 'must be an object with top, right, bottom and/or left (pixels) and background' },
  )
  .refine(atLeastOneSide, { error: 'needs top, right, bottom and/or left' });
export type ExtendValue = z.input<typeof extendSchema>;

export const cropSchema = z
  .strictObject(
    { top: edgePixels().optional(), right: edgePixels().optional(), bottom: edgePixels().optional(), left: edgePixels().optional() },
    { error: 'must be an object with top, right, bottom and/or left (pixels)' },
  )
  .refine(atLeastOneSide, { error: 'needs top, right, bottom and/or left' });
export type CropValue = z.input<typeof cropSchema>;

/** Four values, one a side: top, right, bottom, left (CSS's order). */
type Edges = [number, number, number, number];

export type ResponsiveStep =
  /** sigma 0: nothing. flat, jagged: vips_sharpen's m1 and m2. */
  | { op: 'sharpen'; sigma: number; flat: number; jagged: number }
  /** out = in^(1 / value) on the colour bands. */
  | { op: 'gamma'; value: number }
  /** Pixels added a side (top, right, bottom, left), in rgba (default transparent). */
  | { op: 'extend'; sides: Edges; rgba: Rgba }
  /** Pixels cut off a side (top, right, bottom, left). */
  | { op: 'crop'; sides: Edges };

const edges = (v: Partial<Record<(typeof SIDES)[number], number>>): Edges => SIDES.map((s) => v[s] ?? 0) as Edges;

export function sharpenStep(value: SharpenValue): ResponsiveStep {
  const settings = typeof value === 'number' ? { sigma: value } : value;
  return { op: 'sharpen', sigma: settings.sigma, flat: settings.flat ?? DEFAULT_SHARPEN_FLAT, jagged: settings.jagged ?? DEFAULT_SHARPEN_JAGGED };
}

export function extendStep(value: ExtendValue): ResponsiveStep {
  return { op: 'extend', sides: edges(value), rgba: parseColor(value.background ?? 'transparent')! };
}

export function cropStep(value: CropValue): ResponsiveStep {
  return { op: 'crop', sides: edges(value) };
}
