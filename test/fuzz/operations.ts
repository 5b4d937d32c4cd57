// Random operation lists for the fuzzer: valid ones drawn from the schema's own ranges (kept to
// sizes that run in milliseconds, so the fuzzer spends its time on inputs), invalid ones that the
// schema must refuse, and plans handed to the addon directly that break what it relies on.
import { FIT_MODES, MAX_OPERATIONS, MAX_TONE_FACTOR, OUTPUT_FORMATS, type Operation, type OutputFormat } from '../../lib/schema.js';
import type { Rng } from './mutate.js';

const SIDES = [1, 2, 3, 7, 16, 33, 64, 127, 256];
const COLOURS = ['red', '#0000', '#abc', 'rgb(1 2 3 / 50%)', 'transparent', 'hsl(120 50% 50%)', 'hwb(10 20% 30%)', '#ffffff80'];
// Tone factors the schema accepts (0..MAX_TONE_FACTOR); larger ones are among the invalid lists.
const AMOUNTS = [0, 0.001, 0.5, 1, 1.7, 3, 100, MAX_TONE_FACTOR];
const BLURS = [0, 0.01, 0.3, 1, 2.5, 10, 40];
// The staged cut-outs (docs/api.md, "Extensions: staged cut-outs"), within the schema's ranges.
const SIZES = ['preview', 'medium', 'hd', 'full', 'auto', { megapixels: 0.01 }, { megapixels: 0.0123 }, { megapixels: 100 }] as const;
const SHADOWS = [true, { type: 'contact' }, { opacity: 0 }, { opacity: 1, blur: 0 }, { blur: 250, offsetX: -2000, offsetY: 2000 }, { offsetX: 3, color: '#00f8' }, { type: 'contact', blur: 40, offsetY: -7 }] as const;
// Responsive images (docs/api.md, "Extensions: responsive images"), within the schema's ranges;
// subject (it runs the model) only where the model is there.
const GRAVITIES = ['north', 'southeast', 'west', 'centre', 'attention', { x: 0, y: 1 }, { x: 0.37, y: 0.5 }, { x: 1, y: 0 }] as const;
const SHARPENS = [0, 0.5, 1, 10, { sigma: 2, flat: 0, jagged: 100 }, { sigma: 0.01, flat: 100 }] as const;
const GAMMAS = [0.1, 0.45, 1, 2.2, 10] as const;
const EDGES = [{ top: 1 }, { left: 3, right: 0 }, { top: 2, right: 3, bottom: 4, left: 5 }, { bottom: 64 }] as const;
const PLACES = [{ scale: 10 }, { scale: 100, position: 'original' }, { aspectRatio: '1:1' }, { aspectRatio: '100:1', scale: 55 }, { margin: '40%' }, { margin: 2000 }, { position: { x: 0, y: 100 } }, { scale: 80, aspectRatio: '1:100', margin: 3 }] as const;

/** One valid operation. */
function validOperation(rng: Rng, allowModel: boolean): Operation {
  const roll = rng.int(allowModel ? 18 : 17);
  // The extensions after the specification's ten (the model's removeBackground last).
  if (roll === 10) return { size: rng.pick(SIZES) } as Operation;
  if (roll === 11) return { shadow: rng.pick(SHADOWS) } as Operation;
  if (roll === 12) return { place: rng.pick(PLACES) } as Operation;
  if (roll === 13) return responsiveResize(rng, allowModel);
  if (roll === 14) return { sharpen: rng.pick(SHARPENS) } as Operation;
  if (roll === 15) return { gamma: rng.pick(GAMMAS) };
  if (roll === 16) return rng.chance(0.5) ? ({ extend: { ...rng.pick(EDGES), ...(rng.chance(0.5) ? { background: rng.pick(COLOURS) } : {}) } } as Operation) : ({ crop: rng.pick(EDGES) } as Operation);
  if (roll === 17 && rng.chance(0.5))
    return { removeBackground: rng.pick([{ roi: [0, 0, '100%', '100%'] }, { roi: ['10%', 0, 5, '50.5%'] }, { semitransparency: false }, { roi: [0, 0, 1, 1], semitransparency: false }]) } as Operation;
  switch (roll) {
    case 0:
    case 1: {
      const r: { width?: number; height?: number; fit?: (typeof FIT_MODES)[number] } = {};
      const which = rng.int(3);
      if (which !== 1) r.width = rng.pick(SIDES);
      if (which !== 0) r.height = rng.pick(SIDES);
      if (rng.chance(0.7)) r.fit = rng.pick(FIT_MODES);
      if (r.fit === 'pad') (r.width ??= rng.pick(SIDES)), (r.height ??= rng.pick(SIDES));
      // Now and then the schema's maximum, on a fit that cannot upscale the tiny seeds to it.
      if (rng.chance(0.05)) return { resize: { width: 10000, height: 10000, fit: 'scale-down' } };
      return { resize: r as { width: number } };
    }
    case 2:
      return { rotate: rng.pick([90, 180, 270] as const) };
    case 3:
      return { flip: rng.pick(['h', 'v', 'hv'] as const) };
    case 4:
      return { blur: rng.pick(BLURS) };
    case 5:
      return { brightness: rng.pick(AMOUNTS) };
    case 6:
      return { contrast: rng.pick(AMOUNTS) };
    case 7:
      return { saturation: rng.pick(AMOUNTS) };
    case 8:
      return { background: rng.pick(COLOURS) };
    case 9:
      return { trim: true };
    default:
      return { removeBackground: true };
  }
}

/** A resize with the responsive-image fields: a fit that places a window or a box, gravity, enlarge, keepBoxAspect, dpr. */
function responsiveResize(rng: Rng, allowModel: boolean): Operation {
  const fit = rng.pick(['cover', 'crop', 'pad', 'fill'] as const);
  const gravity = allowModel && fit !== 'pad' && rng.chance(0.2) ? 'subject' : rng.pick(GRAVITIES);
  const resize: Record<string, unknown> = { width: rng.pick(SIDES), height: rng.pick(SIDES), fit, gravity: fit === 'pad' && typeof gravity === 'string' && /subject|attention/.test(gravity) ? 'south' : gravity };
  if (rng.chance(0.3)) resize.enlarge = rng.chance(0.5);
  if (rng.chance(0.3)) resize.dpr = rng.pick([1, 1.5, 2, 4]);
  const enlarges = resize.enlarge ?? fit !== 'crop';
  if (fit !== 'pad' && !enlarges && rng.chance(0.5)) resize.keepBoxAspect = true;
  if (fit === 'pad' && rng.chance(0.5)) resize.background = rng.pick(COLOURS);
  return { resize } as Operation;
}

/**
 * 1..6 valid operations (removeBackground at most once, and only when the model is there; a
 * backgroundImage at most once, the case's own bytes as its background: fuzzed as a second input).
 */
export function validOperations(rng: Rng, allowModel: boolean, allowBackground = false): Operation[] {
  const ops: Operation[] = [];
  const n = 1 + rng.int(rng.chance(0.1) ? MAX_OPERATIONS : 6);
  let model = allowModel && rng.chance(0.15);
  let background = allowBackground && rng.chance(0.15);
  for (let i = 0; i < n; i++) {
    const op = background && rng.chance(0.3) ? ({ backgroundImage: true } as Operation) : validOperation(rng, model);
    if ('removeBackground' in op) model = false;
    if ('backgroundImage' in op) background = false;
    ops.push(op);
  }
  return ops;
}

const BAD_VALUES: unknown[] = [null, undefined, NaN, Infinity, -Infinity, -1, 0, 1.5, 1e308, '', '1', 'x', [], {}, true, 10001, -0];

/** An operation list the schema must refuse: one entry (or the list itself) is broken. */
export function invalidOperations(rng: Rng): unknown {
  const ops: unknown[] = validOperations(rng, false);
  const at = rng.int(ops.length);
  switch (rng.int(10)) {
    case 0:
      return rng.pick([null, 'resize', 42, {}, undefined, []]);
    case 1:
      return Array.from({ length: MAX_OPERATIONS + 1 + rng.int(5) }, () => ({ flip: 'h' }));
    case 2:
      ops[at] = { [rng.pick(['watermark', 'Resize', '__proto__', 'constructor', 'toString', ''])]: 1 };
      return ops;
    case 3:
      ops[at] = { blur: rng.pick([...BAD_VALUES.filter((v) => !(typeof v === 'number' && v >= 0 && v <= 250)), 250.0001]) };
      return ops;
    case 4:
      ops[at] = {
        resize: rng.pick([{}, { width: rng.pick(BAD_VALUES) }, { height: 0 }, { width: 10, fit: 'stretch' }, { width: 10, extra: 1 }, { width: 10, fit: 'pad' }, { width: 10, dpr: rng.pick([0, 5, 0.99]) }, { width: 10, height: 10, fit: 'cover', gravity: rng.pick(['top', { x: 1.1, y: 0 }, { x: 0 }]) }]),
      };
      return ops;
    case 5:
      ops[at] = { rotate: rng.pick([0, 45, -90, 360, '90', null]) };
      return ops;
    case 6:
      ops[at] = { background: rng.pick(['', 'notacolour', 'rgb(1,2)', '#12345', 12, 'url(x)', 'currentcolor']) };
      return ops;
    case 7:
      ops[at] = { flip: 'h', rotate: 90 };
      return ops;
    case 8:
      ops[at] = { [rng.pick(['brightness', 'contrast', 'saturation'])]: rng.pick([MAX_TONE_FACTOR + 0.001, 1e6, 1e10, Number.MAX_VALUE, -1]) };
      return ops;
    default:
      return [...ops, { removeBackground: true }, { removeBackground: true }];
  }
}

export function outputFormat(rng: Rng): OutputFormat {
  // AVIF encodes far slower than the others: one job in ten.
  return rng.chance(0.1) ? 'avif' : rng.pick(OUTPUT_FORMATS.filter((f) => f !== 'avif'));
}

/** Limits now and then small enough that the limit checks themselves are exercised. */
export function limits(rng: Rng): { maxPixels?: number; maxFrames?: number; maxMatteFrames?: number } {
  if (!rng.chance(0.2)) return {};
  return { maxPixels: rng.pick([1, 100, 1000, 100_000]), maxFrames: rng.pick([1, 2, 1000]), maxMatteFrames: rng.pick([1, 100]) };
}

/**
 * A plan for addon.run that breaks what lib/ guarantees (types, ranges, unknown names): the addon's
 * argument conversion must refuse it with a typed error, never crash.
 */
export function brokenPlan(rng: Rng, steps: object[], format: string): Record<string, unknown> {
  const plan: Record<string, unknown> = { steps: [...steps], format, quality: 80, anim: true, maxPixels: 1e8, maxFrames: 1000, maxMatteFrames: 100 };
  const bad = () => rng.pick([...BAD_VALUES, 1e15, -1e15, 2 ** 31, 2 ** 53, 'png', Symbol.iterator.toString()]);
  switch (rng.int(7)) {
    case 0:
      plan[rng.pick(['steps', 'format', 'quality', 'maxPixels', 'maxFrames', 'maxMatteFrames', 'anim'])] = bad();
      break;
    case 1: {
      const list = plan.steps as unknown[];
      list.push(
        rng.pick([
          { op: 'resize', width: bad(), fit: 'contain' },
          { op: 'resize', width: 10, fit: bad() },
          { op: 'resize', fit: 'contain' },
          { op: 'rotate', angle: bad() },
          { op: 'flip', direction: bad() },
          { op: 'flip', direction: '' },
          { op: 'blur', radius: bad() },
          { op: 'brightness', value: bad() },
          { op: 'background', rgba: [bad(), 0, 0] },
          { op: 'background', rgba: [bad(), bad(), bad(), bad()] },
          { op: 'size', megapixels: bad() },
          { op: 'shadow', type: bad(), rgba: [0, 0, 0, 255] },
          { op: 'shadow', type: 'drop', opacity: bad(), blur: bad(), offsetX: bad(), rgba: [0, 0, 0, 255] },
          { op: 'shadow', type: 'contact', rgba: [bad(), 0, 0] },
          { op: 'place', scale: bad(), x: bad(), aspectWidth: bad() },
          { op: 'place', marginPercent: bad(), aspectHeight: 0 },
          { op: 'removeBackground', roi: [bad(), 0, 1, 1], roiPercent: [0, 0, 0, 0] },
          { op: 'removeBackground', roi: [0, 0, 1, 1] },
          { op: 'backgroundImage' },
          { op: bad() },
          null,
          'trim',
        ]),
      );
      break;
    }
    case 2:
      plan.steps = Array.from({ length: 1 + rng.int(300) }, () => ({ op: 'flip', direction: 'h' }));
      break;
    case 3:
      plan.steps = [{ op: 'trimTransparent' }, { op: 'trim' }, ...steps];
      break;
    case 4:
      plan.format = rng.pick(['bmp', 'PNG', '', 'jpg', 'heic', 'tiff', 'AUTO']);
      break;
    case 5:
      // A background image that is not a Buffer, or bytes that are not an image.
      plan.steps = [...steps, { op: 'backgroundImage' }];
      plan.backgroundImage = rng.pick([bad(), Buffer.alloc(0), Buffer.from('GIF89a'), new Uint8Array(3)]);
      break;
    default:
      plan.steps = [{ op: 'removeBackground' }]; // no model handle given
      break;
  }
  return plan;
}
