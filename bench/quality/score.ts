// Scores matte's background removal on the composites that prepare.ts made: per model and per
// setting, IoU at alpha 0.5, MAE, MAE in a band around the true edge, and time per image; then the
// end-to-end time on a 12 MP JPEG with refinement off and on.
//
//   node dist/bench/quality/score.js [--models=u2netp,isnet] [--settings=plain,refine]
//                                    [--split=report|tune|all] [--band=4] [--no-12mp] [--json=FILE]
//                                    [--every=N] [--only-12mp] [--baseline=ADDON] [--set=small]
//
// --every=N keeps every Nth composite of the split (quick looks while developing; reported figures
// are on the whole split); --only-12mp skips the composites and times the 12 MP image only.
// --baseline=ADDON (a matte.node built from an earlier commit by bench/quality/baseline.sh): the
// refine setting is run on both builds, in two processes sent the same jobs in turn (ab.ts), and
// scored and timed side by side (CPU time a job), with the ratios; so is the 12 MP image.
// --set=small: the composites with small subjects (prepare.js --set=small) instead of the main set.
//
// settings: plain (refine off: the model alone), refine (the default), tta (mirror averaging,
// refine off), refine+tta. Only matte's addon is loaded here (pngjs decodes), never sharp.
import { readFileSync, readdirSync, existsSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PNG } from 'pngjs';
import { configure, removeBackground, versions } from '../../lib/index.js';
import { DATA_DIR, readRecipe, compositeName, compositeSet, splitOf } from './recipe.js';
import { compositeScore, edgeBand, score, type Scores } from './metrics.js';
import { AbPair, type AbResult } from './ab.js';

const args = new Map(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k!, v ?? 'true'] as const;
  }),
);
const models = (args.get('models') ?? 'u2netp,isnet').split(',');
const settings = (args.get('settings') ?? 'plain,refine').split(',');
const split = args.get('split') ?? 'report';
const radius = Number(args.get('band') ?? 4);
const every = Math.max(1, Math.floor(Number(args.get('every') ?? 1)) || 1);
const only12mp = args.has('only-12mp');
const baseline = args.get('baseline');
const set = args.get('set') === 'small' ? 'small' : 'main';

interface Setting {
  refine: boolean;
  tta: boolean;
}
function setting(name: string): Setting {
  const parts = new Set(name.split('+'));
  return { refine: parts.has('refine'), tta: parts.has('tta') };
}

/** One band of a PNG (pngjs always decodes to RGBA): the alpha of an output, the grey of a ground truth. */
function bandOf(png: Buffer, band: 'alpha' | 'grey'): { data: Uint8Array; width: number; height: number } {
  const img = PNG.sync.read(png);
  const data = new Uint8Array(img.width * img.height);
  const offset = band === 'alpha' ? 3 : 0;
  for (let i = 0; i < data.length; i++) data[i] = img.data[i * 4 + offset]!;
  return { data, width: img.width, height: img.height };
}

/** A PNG decoded to RGBA (pngjs). */
function rgbaOf(png: Buffer): Uint8Array {
  return PNG.sync.read(png).data;
}

/** A 3-channel truth image (the foreground colours) as RGB. */
function rgbOf(png: Buffer): Uint8Array {
  const rgba = rgbaOf(png);
  const rgb = new Uint8Array((rgba.length / 4) * 3);
  for (let i = 0, j = 0; i < rgba.length; i += 4, j += 3) rgb[j] = rgba[i]!, rgb[j + 1] = rgba[i + 1]!, rgb[j + 2] = rgba[i + 2]!;
  return rgb;
}

interface Row extends Scores {
  /** The cut-out over flat backgrounds against the truth over the same (metrics.ts compositeScore). */
  compositeEdge: number;
  compositeAll: number;
  /** Edge-band MAE over the composites where the plain model found the subject (its IoU >= 0.9). */
  edgeMaeFound: number | null;
  found: number;
  model: string;
  setting: string;
  images: number;
  msPerImage: number;
}

interface Case {
  name: string;
  path: string;
  inputRgba: Uint8Array;
  fg: Uint8Array;
  truth: { data: Uint8Array };
  band: Uint8Array;
}

/** The scores of one model and setting, composite by composite. */
class Tally {
  readonly total: Scores = { iou: 0, mae: 0, edgeMae: 0 };
  readonly composite = { edge: 0, all: 0 };
  // The same matte with the input's own colours: the cut-outs before foreground colours were
  // estimated (same alpha), scored in the same run.
  readonly inputColours = { edge: 0, all: 0 };
  /** Per composite: CPU and wall time, inferences, composite edge error (when measured). */
  readonly jobs: { name: string; cpuMs?: number; wallMs: number; inferences?: number; compositeEdge: number }[] = [];
  private foundEdge = 0;
  private ms = 0;

  constructor(readonly model: string, readonly setting: string, private readonly found: Set<string>) {}

  /** One composite's cut-out; `plain`: the setting that decides which composites the model finds. */
  add(c: Case, png: Buffer, time: Partial<AbResult> & { wallMs: number }, plain = false): void {
    const alpha = bandOf(png, 'alpha');
    const sc = score(alpha.data, c.truth.data, c.band);
    if (plain && sc.iou >= 0.9) this.found.add(c.name);
    const comp = compositeScore(rgbaOf(png), 4, alpha.data, c.fg, c.truth.data, c.band);
    this.composite.edge += comp.edge, this.composite.all += comp.all;
    const before = compositeScore(c.inputRgba, 4, alpha.data, c.fg, c.truth.data, c.band);
    this.inputColours.edge += before.edge, this.inputColours.all += before.all;
    if (args.has('verbose')) console.log(`  ${this.setting} ${c.name}\tIoU ${sc.iou.toFixed(3)}\tMAE ${sc.mae.toFixed(1)}\tedge ${sc.edgeMae.toFixed(1)}\tcomposite edge ${comp.edge.toFixed(2)}${time.inferences ? `\tinferences ${time.inferences}` : ''}`);
    this.total.iou += sc.iou, this.total.mae += sc.mae, this.total.edgeMae += sc.edgeMae;
    if (this.found.has(c.name)) this.foundEdge += sc.edgeMae;
    this.ms += time.wallMs;
    this.jobs.push({ name: c.name, cpuMs: time.cpuMs, wallMs: time.wallMs, inferences: time.inferences, compositeEdge: comp.edge });
  }

  row(n: number): Row {
    const found = this.found.size;
    return { model: this.model, setting: this.setting, compositeEdge: this.composite.edge / n, compositeAll: this.composite.all / n, images: n, found, edgeMaeFound: found ? this.foundEdge / found : null, iou: this.total.iou / n, mae: this.total.mae / n, edgeMae: this.total.edgeMae / n, msPerImage: this.ms / n };
  }
}

/** The ratios of this build's refine to the baseline's: scores, and CPU time where the job ran one or two inferences. */
function compare(model: string, before: Tally, after: Tally): string[] {
  const n = after.jobs.length;
  const b = before.row(n), a = after.row(n);
  const lines = [
    `${model}: refine vs baseline: composite edge ${b.compositeEdge.toFixed(2)} -> ${a.compositeEdge.toFixed(2)} (x${(a.compositeEdge / b.compositeEdge).toFixed(3)}, ${(100 * (a.compositeEdge / b.compositeEdge - 1)).toFixed(1)}%), ` +
      `IoU ${b.iou.toFixed(4)} -> ${a.iou.toFixed(4)}, MAE ${b.mae.toFixed(2)} -> ${a.mae.toFixed(2)}, edge MAE ${b.edgeMae.toFixed(2)} -> ${a.edgeMae.toFixed(2)}`,
  ];
  for (const passes of [1, 2]) {
    const pairs = after.jobs.map((job, i) => ({ job, base: before.jobs[i]! })).filter((p) => (p.job.inferences ?? 1) === passes);
    if (!pairs.length) continue;
    const cpu = (jobs: { cpuMs?: number }[]) => jobs.reduce((sum, j) => sum + (j.cpuMs ?? 0), 0);
    const wall = (jobs: { wallMs: number }[]) => jobs.reduce((sum, j) => sum + j.wallMs, 0);
    const ratios = pairs.map((p) => (p.job.cpuMs ?? 0) / (p.base.cpuMs ?? 1)).sort((x, y) => x - y);
    const [cb, ca] = [cpu(pairs.map((p) => p.base)), cpu(pairs.map((p) => p.job))];
    const [wb, wa] = [wall(pairs.map((p) => p.base)), wall(pairs.map((p) => p.job))];
    lines.push(`${model}: ${pairs.length} composites with ${passes} inference${passes > 1 ? 's' : ''}: CPU ${cb.toFixed(0)} -> ${ca.toFixed(0)} ms (x${(ca / cb).toFixed(3)}; per composite x${ratios[0]!.toFixed(2)}..x${ratios[ratios.length - 1]!.toFixed(2)}, median x${ratios[Math.floor(ratios.length / 2)]!.toFixed(2)}), wall ${wb.toFixed(0)} -> ${wa.toFixed(0)} ms (x${(wa / wb).toFixed(3)})`);
  }
  return lines;
}

/** The 12 MP image with refine on both builds, in turn: medians of CPU and wall time a job. */
async function compare12mp(file: string, model: string, baselineAddon: string): Promise<string> {
  const ab = new AbPair(baselineAddon);
  const job = { file, model, refine: true };
  await ab.run(job, job);  // loads the models; not counted
  const rounds = Math.max(2, Number(args.get('rounds') ?? 6));
  const results: { current: AbResult; baseline: AbResult }[] = [];
  for (let i = 0; i < rounds; i++) results.push(await ab.run(job, job));
  ab.close();
  const median = (v: number[]) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
  const of = (side: 'current' | 'baseline', key: 'cpuMs' | 'wallMs') => median(results.map((r) => r[side][key]));
  const ratios = results.map((r) => r.current.cpuMs / r.baseline.cpuMs).sort((a, b) => a - b);
  return `${model}: 12 MP refine vs baseline (${rounds} rounds, ${results[0]!.current.inferences} inference(s) here, ${results[0]!.baseline.inferences} there): ` +
    `CPU ${of('baseline', 'cpuMs').toFixed(0)} -> ${of('current', 'cpuMs').toFixed(0)} ms (x${(of('current', 'cpuMs') / of('baseline', 'cpuMs')).toFixed(3)}; rounds x${ratios.map((r) => r.toFixed(2)).join(', x')}), ` +
    `wall ${of('baseline', 'wallMs').toFixed(0)} -> ${of('current', 'wallMs').toFixed(0)} ms (x${(of('current', 'wallMs') / of('baseline', 'wallMs')).toFixed(3)})`;
}

async function main(): Promise<void> {
  configure({ concurrency: 1 });
  const recipe = readRecipe();
  const { dir } = compositeSet(recipe, set);
  if (!existsSync(dir)) throw new Error(`no composites: run \`npm run quality\` (or node dist/bench/quality/prepare.js${set === 'small' ? ' --set=small' : ''}) first`);
  const cases = recipe.cutouts
    .map((cutout, index) => ({ index, name: compositeName(index, cutout) }))
    .filter((c) => split === 'all' || splitOf(c.index) === split)
    .filter((_, i) => !only12mp && i % every === 0)
    .map((c) => {
      const truth = bandOf(readFileSync(join(dir, `${c.name}.alpha.png`)), 'grey');
      const path = join(dir, `${c.name}.png`);
      const input = readFileSync(path);
      const fg = rgbOf(readFileSync(join(dir, `${c.name}.fg.png`)));
      return { ...c, path, input, inputRgba: rgbaOf(input), fg, truth, band: edgeBand(truth.data, truth.width, truth.height, radius) };
    });
  console.log(`quality: ${cases.length} composites (${set === 'small' ? 'small subjects, ' : ''}split ${split}${every > 1 ? `, every ${every}th` : ''}), edge band ${radius} px, matte ${JSON.stringify(versions())}`);

  const rows: Row[] = [];
  const comparisons: string[] = [];
  const scratch = join(DATA_DIR, 'ab');
  if (baseline) mkdirSync(scratch, { recursive: true });
  for (const model of cases.length ? models : []) {
    // Which composites the plain model finds (IoU >= 0.9): the secondary edge column is over these,
    // so it is fixed by the model alone, never by the setting scored.
    const found = new Set<string>();
    const order = settings.includes('plain') ? ['plain', ...settings.filter((s) => s !== 'plain')] : settings;
    for (const name of order) {
      const s = setting(name);
      const tally = new Tally(model, name, found);
      // The refine setting against the baseline build: both run in worker processes, in turn.
      const ab = baseline && s.refine && !s.tta ? new AbPair(baseline) : null;
      const before = ab ? new Tally(model, `${name} (baseline)`, found) : null;
      // No job deadline: on a loaded machine an IS-Net job with tta (two inferences) can pass the
      // library's default 30 s, and a measurement must not stop half-way.
      if (!ab) await removeBackground(cases[0]!.input, { model, timeout: 0, ...s }); // loads the model; not timed
      else await ab.run({ file: cases[0]!.path, model, refine: true }, { file: cases[0]!.path, model, refine: true });
      for (const c of cases) {
        if (ab) {
          const job = (output: string) => ({ file: c.path, model, refine: true, output: join(scratch, output) });
          const r = await ab.run(job('current.png'), job('baseline.png'));
          tally.add(c, readFileSync(join(scratch, 'current.png')), r.current);
          before!.add(c, readFileSync(join(scratch, 'baseline.png')), r.baseline);
        } else {
          const start = performance.now();
          const out = await removeBackground(c.input, { model, timeout: 0, ...s });
          tally.add(c, out.data, { wallMs: performance.now() - start }, name === 'plain');
        }
      }
      ab?.close();
      if (before) rows.push(before.row(cases.length));
      const row = tally.row(cases.length);
      rows.push(row);
      if (s.refine) {
        rows.push({ ...row, setting: `${name}, input colours`, compositeEdge: tally.inputColours.edge / cases.length, compositeAll: tally.inputColours.all / cases.length });
        console.log(`${model}\t${name}, input colours\tcomposite edge ${(tally.inputColours.edge / cases.length).toFixed(2)}\tall ${(tally.inputColours.all / cases.length).toFixed(2)}`);
      }
      console.log(`${model}\t${name}\tcomposite edge ${row.compositeEdge.toFixed(2)}\tall ${row.compositeAll.toFixed(2)}\tIoU ${row.iou.toFixed(4)}\tMAE ${row.mae.toFixed(2)}\tedge MAE ${row.edgeMae.toFixed(2)}\tfound ${found.size}: edge MAE ${row.edgeMaeFound?.toFixed(2)}\t${row.msPerImage.toFixed(0)} ms/image`);
      if (before) comparisons.push(...compare(model, before, tally));
    }
  }

  const timing: { model: string; plainMs: number; refineMs: number; ratio: number }[] = [];
  const big = join(DATA_DIR, 'timing-12mp.jpg');
  if (!args.has('no-12mp') && existsSync(big)) {
    const input = readFileSync(big);
    for (const model of models) {
      const times: Record<'plain' | 'refine', number[]> = { plain: [], refine: [] };
      await removeBackground(input, { model, refine: false, timeout: 0 });
      // Alternated, so that load from elsewhere falls on both.
      for (const which of ['plain', 'refine', 'refine', 'plain', 'plain', 'refine'] as const) {
        const start = performance.now();
        await removeBackground(input, { model, refine: which === 'refine', timeout: 0 });
        times[which].push(performance.now() - start);
      }
      const median = (v: number[]) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
      const t = { model, plainMs: median(times.plain), refineMs: median(times.refine), ratio: 0 };
      t.ratio = t.refineMs / t.plainMs;
      timing.push(t);
      console.log(`${model}\t12 MP end to end: refine off ${t.plainMs.toFixed(0)} ms, on ${t.refineMs.toFixed(0)} ms (x${t.ratio.toFixed(3)})`);
      if (baseline) comparisons.push(await compare12mp(big, model, baseline));
    }
  }
  for (const line of comparisons) console.log(line);

  console.log('\n| model | setting | IoU@0.5 | MAE | edge-band MAE | edge-band MAE, subject found | composite, edge band | composite, whole image | ms/image |\n|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const foundText = r.edgeMaeFound === null ? 'n/a' : `${r.edgeMaeFound.toFixed(2)} (${r.found} of ${r.images})`;
    console.log(`| ${r.model} | ${r.setting} | ${r.iou.toFixed(4)} | ${r.mae.toFixed(2)} | ${r.edgeMae.toFixed(2)} | ${foundText} | ${r.compositeEdge.toFixed(2)} | ${r.compositeAll.toFixed(2)} | ${r.msPerImage.toFixed(0)} |`);
  }
  const file = args.get('json') ?? join(DATA_DIR, `results-${set === 'small' ? 'small-' : ''}${split}.json`);
  mkdirSync(DATA_DIR, { recursive: true });
  writeFileSync(file, JSON.stringify({ split, band: radius, rows, timing }, null, 1));
}

main().catch((err) => {
  console.error(`quality: ${(err as Error).message}`);
  process.exit(1);
});
