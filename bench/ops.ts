// `npm run bench -- --only=ops`: what the responsive-image extensions (docs/api.md, "Extensions:
// responsive images") cost over the same resize without them, on the bench's 12 MP photo. Each
// variant runs beside its base in one process, alternated run by run (base, variant, ...), so
// load from elsewhere on a shared machine lands on both; the figures are ratios of medians.
// `subject` is timed with the matte cache warm (one inference a photo, measured apart).
import { runWorker, type Timing } from './common.js';
import { INPUT_FILES } from './pipelines.js';

/** A variant of the 800x800 cover (a square card of the 4:3 photo: gravity has a window to place), and the resize it is compared with. */
export interface OpsVariant {
  name: string;
  base: string;
  operations: unknown[];
}

const cover = { width: 800, height: 800, fit: 'cover' };

export const OPS_VARIANTS: OpsVariant[] = [
  { name: 'cover', base: 'cover', operations: [{ resize: cover }] },
  { name: 'gravity north', base: 'cover', operations: [{ resize: { ...cover, gravity: 'north' } }] },
  { name: 'focal point', base: 'cover', operations: [{ resize: { ...cover, gravity: { x: 0.3, y: 0.6 } } }] },
  { name: 'attention', base: 'cover', operations: [{ resize: { ...cover, gravity: 'attention' } }] },
  { name: 'subject (cached)', base: 'cover', operations: [{ resize: { ...cover, gravity: 'subject' } }] },
  { name: 'dpr 2 (400x400)', base: 'cover', operations: [{ resize: { width: 400, height: 400, fit: 'cover', dpr: 2 } }] },
  { name: 'sharpen 1', base: 'cover', operations: [{ resize: cover }, { sharpen: 1 }] },
  { name: 'gamma 2.2', base: 'cover', operations: [{ resize: cover }, { gamma: 2.2 }] },
  { name: 'contain 800x800', base: 'contain 800x800', operations: [{ resize: { width: 800, height: 800 } }] },
  { name: 'pad 800x800', base: 'contain 800x800', operations: [{ resize: { width: 800, height: 800, fit: 'pad', background: '#ffffff' } }] },
];

export interface OpsResult {
  timings: Record<string, Timing>;
  /** The first subject crop of the photo: the model's inference and the cache's write. */
  subjectFirstMs: number;
  model: string;
}

/** Runs the variants in one worker process and returns each one's ratio to its base. */
export async function benchOps(options: { warmup: number; runs: number; threads: number }): Promise<OpsResult & { ratios: Record<string, number> }> {
  const result = await runWorker<OpsResult>('matte-ops', { ...options, input: INPUT_FILES.photo, variants: OPS_VARIANTS });
  const ratios = Object.fromEntries(OPS_VARIANTS.filter((v) => v.name !== v.base).map((v) => [v.name, result.timings[v.name]!.median / result.timings[v.base]!.median]));
  return { ...result, ratios };
}
