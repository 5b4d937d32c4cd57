// Random operation lists for property tests (fast-check, seeded): mostly well-formed operations with
// values drawn from around and far beyond every bound, mixed with arbitrary JSON, so that both the
// schema's refusals and the addon's real runs are exercised.
import fc from 'fast-check';

const number = fc.oneof(
  fc.integer({ min: -3, max: 300 }),
  fc.double({ min: -1e3, max: 1e3, noNaN: true }),
  fc.constantFrom(0, 1, 0.5, 2, 254.9, 255, 255.1, 1e9, 2e9, -0, 1e308, -1e308, 10000, 10001, 4294967296),
);
const side = fc.oneof(fc.integer({ min: 1, max: 64 }), fc.constantFrom(0, -1, 1.5, 9999, 10000, 10001, 1e9));
const colour = fc.oneof(
  fc.constantFrom('red', 'transparent', '#fff', '#ff000080', 'rgb(1x)', 'rgb(1 2 3 / 0.5)', 'hsl(120 50% 50%)', 'hwb(1x 2% 3%)', 'lab(50 0 0)', 'rgba(', '', '#12345'),
  fc.string({ maxLength: 12 }).map((s) => `rgb(${s})`),
  fc.string({ maxLength: 12 }),
);

const operation = fc.oneof(
  fc.record({ resize: fc.record({ width: side, height: side, fit: fc.constantFrom('contain', 'cover', 'scale-down', 'crop', 'fill', 'pad', 'stretch') }, { requiredKeys: [] }) }),
  fc.record({ rotate: fc.oneof(fc.constantFrom(90, 180, 270), number) }),
  fc.record({ flip: fc.constantFrom('h', 'v', 'hv', 'x', '') }),
  fc.record({ blur: fc.oneof(fc.double({ min: 0, max: 3, noNaN: true }), number) }),
  fc.record({ brightness: number }),
  fc.record({ contrast: number }),
  fc.record({ saturation: number }),
  fc.record({ background: colour }),
  fc.record({ trim: fc.oneof(fc.constant(true), fc.jsonValue({ maxDepth: 1 })) }),
  // The staged cut-outs' extensions (backgroundImage without its image: refused, typed).
  fc.record({ size: fc.oneof(fc.constantFrom('preview', 'medium', 'hd', 'full', 'auto', 'huge', ''), fc.record({ megapixels: number }), fc.jsonValue({ maxDepth: 1 })) }),
  fc.record({ shadow: fc.oneof(fc.constant(true), fc.record({ type: fc.constantFrom('drop', 'contact', 'x'), opacity: number, blur: number, offsetX: number, offsetY: number, color: colour }, { requiredKeys: [] })) }),
  fc.record({ place: fc.record({ scale: number, position: fc.oneof(fc.constantFrom('center', 'original', 'left'), fc.record({ x: number, y: number })), aspectRatio: fc.constantFrom('1:1', '16:9', '0:1', '1:100', '101:1', 'x'), margin: fc.oneof(number, fc.constantFrom('10%', '40%', '41%', '')) }, { requiredKeys: [] }) }),
  fc.record({ backgroundImage: fc.oneof(fc.constant(true), fc.jsonValue({ maxDepth: 1 })) }),
  // Responsive images' extensions (subject without a model loaded: refused, typed).
  fc.record({
    resize: fc.record(
      {
        width: side,
        height: side,
        fit: fc.constantFrom('cover', 'crop', 'pad', 'fill', 'contain'),
        gravity: fc.oneof(fc.constantFrom('north', 'southwest', 'centre', 'attention', 'subject', 'top', ''), fc.record({ x: number, y: number }, { requiredKeys: [] })),
        enlarge: fc.oneof(fc.boolean(), fc.jsonValue({ maxDepth: 0 })),
        dpr: fc.oneof(fc.constantFrom(1, 1.5, 2, 4), number),
        background: colour,
      },
      { requiredKeys: [] },
    ),
  }),
  fc.record({ sharpen: fc.oneof(number, fc.record({ sigma: number, flat: number, jagged: number }, { requiredKeys: [] })) }),
  fc.record({ gamma: number }),
  fc.record({ extend: fc.record({ top: side, right: side, bottom: side, left: side, background: colour }, { requiredKeys: [] }) }),
  fc.record({ crop: fc.record({ top: side, right: side, bottom: side, left: side }, { requiredKeys: [] }) }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }),
  fc.jsonValue({ maxDepth: 2 }),
);

/** A JSON value meant as an operation list: usually an array of 0..22 operations. */
export const operationList = fc.oneof(
  { weight: 9, arbitrary: fc.array(operation, { minLength: 0, maxLength: 22 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);
