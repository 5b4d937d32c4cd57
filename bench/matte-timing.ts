// Times one removeBackground per model, on lenna.png (512x512) and on a 4000x3000 JPEG: the
// inference alone (the probes build's infer() on the normalised model-size tensor) and end to end
// (decode, resize to the model, inference, matte back to full size, PNG or WebP encode). The
// figures in README.md ("Models") come from this script:
//
//   npm run build && node dist/bench/matte-timing.js [--runs=5] [u2netp] [isnet]
//
// Each model runs in a child process of its own, so that its peak RSS is its own. Jobs run one at
// a time with all cores for libvips and ONNX Runtime (configure({ concurrency: 1 })).
import { probes } from '../test/helpers/probes.js'; // first: lib/ then loads the probes build (infer)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { PNG } from 'pngjs';
import { configure, edit, loadModel, removeBackground, type ModelEntry } from '../lib/index.js';
import { modelPath } from '../lib/models.js';
import { fixture } from '../test/helpers/fixtures.js';
import { time as timed } from './common.js';

const argv = process.argv.slice(2);
const runs = Number(argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 5);
const child = argv.find((a) => a.startsWith('--child='))?.slice(8);

/** Median ms of `runs` timed calls after one warm-up. */
const time = async (fn: () => Promise<unknown>): Promise<number> => (await timed(fn, 1, runs)).median;

/** The normalised planar tensor the step would feed the model for this image. */
async function modelInput(image: Buffer, entry: ModelEntry): Promise<Float32Array> {
  const { width, height, divide, mean, std } = entry.input;
  const small = await edit(image, [{ resize: { width, height, fit: 'cover' } }], { format: 'png' });
  const rgba = PNG.sync.read(small.data).data;
  const plane = width * height;
  let d = divide === 'max' ? 1 : divide;
  if (divide === 'max') for (let i = 0; i < plane; i++) for (let c = 0; c < 3; c++) d = Math.max(d, rgba[i * 4 + c]!);
  const chw = new Float32Array(3 * plane);
  for (let i = 0; i < plane; i++) for (let c = 0; c < 3; c++) chw[c * plane + i] = (rgba[i * 4 + c]! / d - mean[c]!) / std[c]!;
  return chw;
}

async function measure(name: string): Promise<void> {
  configure({ concurrency: 1 });
  const model = await loadModel(name);
  const lenna = await fixture('lenna.png');
  const lennaBytes = readFileSync(lenna);
  const photo = (await edit(lennaBytes, [{ resize: { width: 4000, height: 3000, fit: 'cover' } }], { format: 'jpeg', quality: 90 })).data;
  const rows: Record<string, number | string> = { model: name };
  for (const [label, image] of [['lenna', lennaBytes], ['4000x3000', photo]] as const) {
    const chw = await modelInput(image, model.entry);
    rows[`${label} inference ms`] = await time(() => probes.infer(model.handle, chw));
    rows[`${label} e2e png ms`] = await time(() => removeBackground(image, { format: 'png' }));
    rows[`${label} e2e webp ms`] = await time(() => removeBackground(image, { format: 'webp' }));
    // The encode alone, roughly: the RGBA result decoded and encoded again with no step.
    const result = (await removeBackground(image, { format: 'png' })).data;
    const plan = { steps: [], format: 'png' as const, quality: 80, anim: false, maxPixels: 1e9, maxFrames: 1, maxMatteFrames: 1 };
    rows[`${label} png decode+encode ms`] = await time(() => probes.run(result, plan, undefined));
  }
  rows['peak RSS MiB'] = Math.round(process.resourceUsage().maxRSS / 1024);
  process.stdout.write(JSON.stringify(rows) + '\n');
}

async function main(): Promise<void> {
  if (child) return measure(child);
  const names = argv.filter((a) => !a.startsWith('--'));
  if (!names.length) names.push('u2netp', 'isnet');
  const cpu = cpus()[0]?.model ?? 'unknown';
  console.log(`machine: ${availableParallelism()} cores (nproc), ${cpu}; node ${process.version}; ${runs} timed runs each, median`);
  for (const name of names) {
    if (!existsSync(modelPath(name))) {
      console.log(`${name}: not fetched (npm run models -- ${name}), skipped`);
      continue;
    }
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), `--child=${name}`, `--runs=${runs}`], { encoding: 'utf8' });
    const row = JSON.parse(out.trim().split('\n').pop()!) as Record<string, number | string>;
    for (const [k, v] of Object.entries(row)) console.log(`  ${k.padEnd(32)} ${typeof v === 'number' ? v.toFixed(0) : v}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
