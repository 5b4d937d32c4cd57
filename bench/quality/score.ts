// Scores matte's background removal on the composites that prepare.ts made: per model and per
// setting, IoU at alpha 0.5, MAE, MAE in a band around the true edge, and time per image; then the
// end-to-end time on a 12 MP JPEG with refinement off and on.
//
//   node dist/bench/quality/score.js [--models=u2netp,isnet] [--settings=plain,refine]
//                                    [--split=report|tune|all] [--band=4] [--no-12mp] [--json=FILE]
//                                    [--every=N] [--only-12mp]
//
// --every=N keeps every Nth composite of the split (quick looks while developing; reported figures
// are on the whole split); --only-12mp skips the composites and times the 12 MP image only.
//
// settings: plain (refine off: the model alone), refine (the default), tta (mirror averaging,
// refine off), refine+tta. Only matte's addon is loaded here (pngjs decodes), never sharp.
import { readFileSync, readdirSync, existsSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PNG } from 'pngjs';
import { configure, removeBackground, versions } from '../../lib/index.js';
import { DATA_DIR, readRecipe, compositeName, splitOf } from './recipe.js';
import { compositeScore, edgeBand, score, type Scores } from './metrics.js';

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

async function main(): Promise<void> {
  configure({ concurrency: 1 });
  const recipe = readRecipe();
  const dir = join(DATA_DIR, 'composites');
  if (!existsSync(dir)) throw new Error('no composites: run `npm run quality` (or node dist/bench/quality/prepare.js) first');
  const cases = recipe.cutouts
    .map((cutout, index) => ({ index, name: compositeName(index, cutout) }))
    .filter((c) => split === 'all' || splitOf(c.index) === split)
    .filter((_, i) => !only12mp && i % every === 0)
    .map((c) => {
      const truth = bandOf(readFileSync(join(dir, `${c.name}.alpha.png`)), 'grey');
      const input = readFileSync(join(dir, `${c.name}.png`));
      const fg = rgbOf(readFileSync(join(dir, `${c.name}.fg.png`)));
      return { ...c, input, inputRgba: rgbaOf(input), fg, truth, band: edgeBand(truth.data, truth.width, truth.height, radius) };
    });
  console.log(`quality: ${cases.length} composites (split ${split}${every > 1 ? `, every ${every}th` : ''}), edge band ${radius} px, matte ${JSON.stringify(versions())}`);

  const rows: Row[] = [];
  for (const model of cases.length ? models : []) {
    // Which composites the plain model finds (IoU >= 0.9): the secondary edge column is over these,
    // so it is fixed by the model alone, never by the setting scored.
    const found = new Set<string>();
    const order = settings.includes('plain') ? ['plain', ...settings.filter((s) => s !== 'plain')] : settings;
    for (const name of order) {
      const s = setting(name);
      const total: Scores = { iou: 0, mae: 0, edgeMae: 0 };
      let ms = 0;
      let foundEdge = 0;
      // The refined matte with the input's own colours: the cut-outs before foreground colours were
      // estimated (same alpha), scored in the same run.
      const inputColours = { edge: 0, all: 0 };
      const composite = { edge: 0, all: 0 };
      // No job deadline: on a loaded machine an IS-Net job with tta (two inferences) can pass the
      // library's default 30 s, and a measurement must not stop half-way.
      await removeBackground(cases[0]!.input, { model, timeout: 0, ...s }); // loads the model; not timed
      for (const c of cases) {
        const start = performance.now();
        const out = await removeBackground(c.input, { model, timeout: 0, ...s });
        ms += performance.now() - start;
        const alpha = bandOf(out.data, 'alpha');
        const sc = score(alpha.data, c.truth.data, c.band);
        const comp = compositeScore(rgbaOf(out.data), 4, alpha.data, c.fg, c.truth.data, c.band);
        composite.edge += comp.edge, composite.all += comp.all;
        const before = compositeScore(c.inputRgba, 4, alpha.data, c.fg, c.truth.data, c.band);
        inputColours.edge += before.edge, inputColours.all += before.all;
        if (args.has('verbose')) console.log(`  ${c.name}\tIoU ${sc.iou.toFixed(3)}\tMAE ${sc.mae.toFixed(1)}\tedge ${sc.edgeMae.toFixed(1)}`);
        total.iou += sc.iou;
        total.mae += sc.mae;
        total.edgeMae += sc.edgeMae;
        if (name === 'plain' && sc.iou >= 0.9) found.add(c.name);
        if (found.has(c.name)) foundEdge += sc.edgeMae;
      }
      const n = cases.length;
      const row: Row = { model, setting: name, compositeEdge: composite.edge / n, compositeAll: composite.all / n, images: n, found: found.size, edgeMaeFound: found.size ? foundEdge / found.size : null, iou: total.iou / n, mae: total.mae / n, edgeMae: total.edgeMae / n, msPerImage: ms / n };
      rows.push(row);
      if (s.refine) {
        rows.push({ ...row, setting: `${name}, input colours`, compositeEdge: inputColours.edge / n, compositeAll: inputColours.all / n });
        console.log(`${model}\t${name}, input colours\tcomposite edge ${(inputColours.edge / n).toFixed(2)}\tall ${(inputColours.all / n).toFixed(2)}`);
      }
      console.log(`${model}\t${name}\tcomposite edge ${row.compositeEdge.toFixed(2)}\tall ${row.compositeAll.toFixed(2)}\tIoU ${row.iou.toFixed(4)}\tMAE ${row.mae.toFixed(2)}\tedge MAE ${row.edgeMae.toFixed(2)}\tfound ${found.size}: edge MAE ${row.edgeMaeFound?.toFixed(2)}\t${row.msPerImage.toFixed(0)} ms/image`);
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
    }
  }

  console.log('\n| model | setting | IoU@0.5 | MAE | edge-band MAE | edge-band MAE, subject found | composite, edge band | composite, whole image | ms/image |\n|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const foundText = r.edgeMaeFound === null ? 'n/a' : `${r.edgeMaeFound.toFixed(2)} (${r.found} of ${r.images})`;
    console.log(`| ${r.model} | ${r.setting} | ${r.iou.toFixed(4)} | ${r.mae.toFixed(2)} | ${r.edgeMae.toFixed(2)} | ${foundText} | ${r.compositeEdge.toFixed(2)} | ${r.compositeAll.toFixed(2)} | ${r.msPerImage.toFixed(0)} |`);
  }
  const file = args.get('json') ?? join(DATA_DIR, `results-${split}.json`);
  mkdirSync(DATA_DIR, { recursive: true });
  writeFileSync(file, JSON.stringify({ split, band: radius, rows, timing }, null, 1));
}

main().catch((err) => {
  console.error(`quality: ${(err as Error).message}`);
  process.exit(1);
});
