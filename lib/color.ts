// CSS colour -> RGBA, through culori (a well-kept CSS Color 4 parser).
//
// docs/api.md accepts hex (#RGB, #RGBA, #RRGGBB, #RRGGBBAA), rgb()/rgba(), hsl()/hsla(), hwb() and
// named colours (including `transparent`). culori parses more than that (lab(), color(), ...);
// those other forms are refused here so the API stays exactly what docs/api.md promises.
//
// culori is required on the first colour, not imported with the library: it would add to every
// process's resident memory at start (docs/architecture.md, "What a process loads at start"), and
// most edits have no colour.
// parseColor is synchronous (zod refinements call it), hence require() of culori's CommonJS build
// (the same version and sources; its package.json maps `require` to bundled/culori.cjs).
import { createRequire } from 'node:module';
import type * as Culori from 'culori';
import { z } from 'zod';

/** 8-bit sRGB red, green, blue and alpha, each 0..255. */
export type Rgba = [number, number, number, number];

let culori: { parse: typeof Culori.parse; toRgb: ReturnType<typeof Culori.converter<'rgb'>> } | undefined;
function loadCulori(): NonNullable<typeof culori> {
  if (!culori) {
    const { parse, converter } = createRequire(import.meta.url)('culori') as typeof Culori;
    culori = { parse, toRgb: converter('rgb') };
  }
  return culori;
}
const ACCEPTED_FORM = /^(#[0-9a-f]+|(rgba?|hsla?|hwb)\(.*\)|[a-z]+)$/i;

/**
 * The longest colour text parsed. The longest accepted form (`hsla(...)` with four decimal
 * components) is well under it; culori's legacy rgb() pattern backtracks on long digit runs, so no
 * longer text ever reaches it.
 */
export const MAX_COLOR_LENGTH = 64;

const clampByte = (v: number) => Math.min(255, Math.max(0, Math.round(v * 255)));

/** Parses a CSS colour; returns undefined when the string is not one of the accepted forms. */
export function parseColor(text: string): Rgba | undefined {
  if (text.length > MAX_COLOR_LENGTH) return undefined;
  // Every accepted form is case-insensitive in CSS; culori's function names are not.
  const trimmed = text.trim().toLowerCase();
  if (!ACCEPTED_FORM.test(trimmed)) return undefined;
  // culori throws (a TypeError) on some malformed arguments, e.g. `rgb(1x)`, instead of returning
  // undefined: a malformed colour is the user's error, never ours.
  const { parse, toRgb } = loadCulori();
  let rgb: ReturnType<typeof toRgb> | undefined;
  try {
    const parsed = parse(trimmed);
    if (!parsed) return undefined;
    rgb = toRgb(parsed);
  } catch {
    return undefined;
  }
  if (!rgb) return undefined;
  const alpha = rgb.alpha ?? 1;
  // Missing (NaN) components, as in `hsl(none ...)`, count as 0 like CSS does.
  const channel = (v: number) => clampByte(Number.isFinite(v) ? v : 0);
  return [channel(rgb.r), channel(rgb.g), channel(rgb.b), channel(alpha)];
}

/** A CSS colour as an operation's value takes it (background, pad's box, extend, a shadow's colour). */
export const colourSchema = () =>
  z
    .string({ error: 'must be a CSS colour string' })
    .max(MAX_COLOR_LENGTH, { error: `must be a CSS colour of at most ${MAX_COLOR_LENGTH} characters`, abort: true })
    .refine((v) => parseColor(v) !== undefined, { error: 'must be a CSS colour (hex, rgb(), hsl(), hwb() or a name)' });
