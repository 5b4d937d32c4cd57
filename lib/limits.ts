// The safety limits of one job (docs/api.md, "Input") and the bounds each may be set to. The
// server's configuration (server/config.ts) and the library's options take their bounds from here,
// and here from the addon, which checks the same numbers (native/bounds.h).
import { MatteError } from './errors.js';
import { addon } from './native.js';

/** Safety limits of one job. */
export interface Limits {
  /**
   * width x height x frames used, checked from the header before decoding. The decoded bytes
   * (x bands x bytes per sample) are also held to maxPixels x DECODED_BYTES_PER_PIXEL.
   * Default 100 000 000.
   */
  maxPixels: number;
  /** Frames of an animation that may be used. Default 1000. */
  maxFrames: number;
  /** Frames that removeBackground may run on. Default 100. */
  maxMatteFrames: number;
}

const { limits: bounds } = addon.bounds;

export const DEFAULT_LIMITS: Limits = {
  maxPixels: bounds.maxPixels.default,
  maxFrames: bounds.maxFrames.default,
  maxMatteFrames: bounds.maxMatteFrames.default,
};

/** The smallest and largest value of each limit (the addon refuses anything outside). */
export const LIMIT_BOUNDS: { readonly [K in keyof Limits]: { readonly min: number; readonly max: number } } = {
  maxPixels: { min: bounds.maxPixels.min, max: bounds.maxPixels.max },
  maxFrames: { min: bounds.maxFrames.min, max: bounds.maxFrames.max },
  maxMatteFrames: { min: bounds.maxMatteFrames.min, max: bounds.maxMatteFrames.max },
};

/**
 * Bytes a decoded pixel may take on average: width x height x frames x bands x bytes per sample
 * is at most maxPixels x this (8-bit RGBA at the pixel limit; 16-bit RGBA at half of it).
 */
export const DECODED_BYTES_PER_PIXEL = addon.bounds.decodedBytesPerPixel;

/**
 * The limits of one job: the defaults overridden by `given`, each a whole number within its bounds
 * (MatteError invalid_option otherwise, path e.g. `limits.maxPixels`).
 */
export function resolveLimits(given: Partial<Limits> | undefined): Limits {
  const limits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as Array<keyof Limits>) {
    const value = given?.[key];
    if (value === undefined) continue;
    const { min, max } = LIMIT_BOUNDS[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new MatteError('invalid_option', `limits.${key}: must be a whole number from ${min} to ${max}`, `limits.${key}`);
    }
    limits[key] = value;
  }
  return limits;
}
