// `npm run bench [-- --quick] [-- --only=edit,bg,staging,http,thumbs,removebg,dialects,bulk,ops]`: matte side by side with its peers on
// this machine, in one run, on the same inputs. Prints ratios (matte / peer) and writes
// bench/out/latest.json (and a dated copy). See bench/README.md for what each figure means.
//
// Every tool runs in a child process of its own (bench/workers/*): sharp and matte's addon each
// bring a libvips, matte and onnxruntime-node each a libonnxruntime.so.1, which must never share a
// process; and peak RSS is then per tool and per pipeline.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { OUT, ROOT, ensureDirs, runWorker, summarise, type Timing } from './common.js';
import { INPUT_FILES, PIPELINES, modelSizeInput } from './pipelines.js';
import { benchOps, OPS_VARIANTS } from './ops.js';
import { modelsDir as defaultModelsDir } from '../lib/models-dir.js';
import { originalPath } from '../models/derive.js';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const only = (argv.find((a) => a.startsWith('--only='))?.slice(7).split(',') ?? ['edit', 'bg', 'staging', 'http', 'thumbs', 'removebg', 'dialects', 'bulk', 'ops']).map((s) => s.trim());
const threads = availableParallelism();

// Each measurement is split into `rounds` child processes per tool, run alternately (matte,
// peer, matte, peer, ...), so that a burst of load from elsewhere on a shared machine lands on
// both tools rather than on one; the timed runs of all rounds are pooled.
const budget = quick
  ? { rounds: 1, editWarmup: 1, editRuns: 7, bgWarmup: 1, bgRuns: 7, models: ['u2netp'], http: { raw: [300, 600, 600] as [number, number, number], bg: [10, 20] as [number, number], bgOtherModels: 4, shareAB: 8, warmup: 1000 }, thumbs: { rounds: 1, requests: { T1: 60, T2: 24 }, warmup: 20, connections: 4 }, removebg: 2, dialects: [10, 100] as [number, number] }
  : { rounds: 3, editWarmup: 2, editRuns: 5, bgWarmup: 1, bgRuns: 4, models: ['u2netp', 'isnet'], http: { raw: [1000, 2000, 2000] as [number, number, number], bg: [40, 80] as [number, number], bgOtherModels: 10, shareAB: 40, warmup: 6000 }, thumbs: { rounds: 3, requests: { T1: 240, T2: 90 }, warmup: 120, connections: 4 }, removebg: 4, dialects: [30, 300] as [number, number] };

/** Pools the rounds of one tool: all timed runs, the highest peak RSS, the first round's rest. */
function pool<T extends { timing: Timing; peakRssMB: number; inference?: Timing; refinedTiming?: Timing }>(rounds: T[]): T {
  const first = rounds[0]!;
  const pooled: T = { ...first, timing: summarise(rounds.flatMap((r) => r.timing.runs)), peakRssMB: Math.max(...rounds.map((r) => r.peakRssMB)) };
  if (first.inference) pooled.inference = summarise(rounds.flatMap((r) => r.inference!.runs));
  if (first.refinedTiming) pooled.refinedTiming = summarise(rounds.flatMap((r) => r.refinedTiming!.runs));
  return pooled;
}

/** Runs the workers `budget.rounds` times alternately, and pools each one's rounds. */
async function alternate<A, B>(a: () => Promise<A>, b: () => Promise<B>): Promise<[A[], B[]]> {
  const as: A[] = [];
  const bs: B[] = [];
  for (let round = 0; round < budget.rounds; round++) {
    if (round % 2 === 0) {
      as.push(await a());
      bs.push(await b());
    } else {
      bs.push(await b());
      as.push(await a());
    }
  }
  return [as, bs];
}

const transcript: string[] = [];
const log = (line = '') => {
  transcript.push(line);
  process.stdout.write(`${line}\n`);
};
const fmt = (v: number | null | undefined, digits = 1) => (v === null || v === undefined || Number.isNaN(v) ? '-' : v.toFixed(digits));
const ratio = (a: number, b: number) => a / b;

function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(cells[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.slice(1).map(line)].join('\n');
}

interface EditResult {
  tool: string;
  pipeline: string;
  versions: Record<string, string>;
  timing: Timing;
  output: { file: string; width: number; height: number; frames: number; bytes: number };
  rssBeforeMB: number;
  peakRssMB: number;
}
interface Comparison {
  name: string;
  sameSize?: boolean;
  mad?: number | null;
  maxDiff?: number | null;
  error?: string;
  a?: { width: number; height: number; frames: number };
  b?: { width: number; height: number; frames: number };
}

interface Target {
  what: string;
  target: string;
  measured: string;
  met: boolean | null;
}

async function benchEdit(targets: Target[]) {
  log(`\n## Edit: matte lib/ vs sharp (${threads} libvips threads each, ${budget.rounds} x (${budget.editWarmup} warm-up + ${budget.editRuns} timed runs), one process per tool, pipeline and round)`);
  const results: Record<string, { matte: EditResult; sharp: EditResult; compare?: Comparison }> = {};
  for (const p of PIPELINES) {
    const args = { pipeline: p.id, warmup: budget.editWarmup, runs: budget.editRuns, threads };
    const [matteRounds, sharpRounds] = await alternate(
      () => runWorker<EditResult>('matte-edit', args),
      () => runWorker<EditResult>('sharp-edit', args),
    );
    const matte = pool(matteRounds);
    const sharp = pool(sharpRounds);
    results[p.id] = { matte, sharp };
    log(`  ${p.id}: matte ${fmt(matte.timing.median)} ms, sharp ${fmt(sharp.timing.median)} ms`);
  }
  const compared = await runWorker<Comparison[]>('compare', {
    pairs: PIPELINES.map((p) => ({ name: p.id, a: results[p.id]!.matte.output.file, b: results[p.id]!.sharp.output.file, mode: 'rgb' })),
  });
  for (const c of compared) results[c.name]!.compare = c;

  const rows = PIPELINES.map((p) => {
    const { matte, sharp, compare } = results[p.id]!;
    const dims = `${matte.output.width}x${matte.output.height}${matte.output.frames > 1 ? `x${matte.output.frames}` : ''}`;
    const sharpDims = `${sharp.output.width}x${sharp.output.height}${sharp.output.frames > 1 ? `x${sharp.output.frames}` : ''}`;
    return [
      p.id,
      `${fmt(matte.timing.median)} / ${fmt(matte.timing.min)}`,
      `${fmt(sharp.timing.median)} / ${fmt(sharp.timing.min)}`,
      fmt(ratio(matte.timing.median, sharp.timing.median), 2),
      `${fmt(matte.peakRssMB, 0)} / ${fmt(sharp.peakRssMB, 0)}`,
      fmt(ratio(matte.peakRssMB, sharp.peakRssMB), 2),
      `${fmt(matte.rssBeforeMB, 0)} / ${fmt(sharp.rssBeforeMB, 0)}`,
      `${fmt(matte.peakRssMB - matte.rssBeforeMB, 0)} / ${fmt(sharp.peakRssMB - sharp.rssBeforeMB, 0)}`,
      dims === sharpDims ? dims : `${dims} vs ${sharpDims} (DIFFERENT)`,
      fmt(compare?.mad, 2),
      `${matte.output.bytes} / ${sharp.output.bytes}`,
    ];
  });
  log(table(['pipeline', 'matte ms med/min', 'sharp ms med/min', 'time matte/sharp', 'peak RSS MB m/s', 'RSS matte/sharp', 'RSS at start m/s', 'peak - start m/s', 'output', 'mean abs diff', 'bytes m/s'], rows));
  for (const p of PIPELINES) {
    const { matte, sharp, compare } = results[p.id]!;
    const t = ratio(matte.timing.median, sharp.timing.median);
    const r = ratio(matte.peakRssMB, sharp.peakRssMB);
    // P1 and P2 are the thumbnail-like pipelines (issue 42): resampling and a lossy encode.
    const timeTarget = p.id === 'P1' || p.id === 'P2' ? 0.85 : 1;
    targets.push({ what: `${p.id} time matte/sharp`, target: `<= ${timeTarget.toFixed(2)}`, measured: fmt(t, 2), met: t <= timeTarget });
    if (p.format === 'jpeg' || p.format === 'webp') {
      const bytes = ratio(matte.output.bytes, sharp.output.bytes);
      targets.push({ what: `${p.id} output bytes matte/sharp (${p.format} q${p.quality})`, target: '<= 1.01', measured: fmt(bytes, 3), met: bytes <= 1.01 });
    }
    targets.push({ what: `${p.id} peak RSS matte/sharp`, target: '<= 1.00', measured: fmt(r, 2), met: r <= 1 });
    targets.push({ what: `${p.id} same output size`, target: 'equal', measured: compare?.sameSize ? 'equal' : 'DIFFERENT', met: !!compare?.sameSize });
  }
  return { versions: { matte: results.P1?.matte.versions, sharp: results.P1?.sharp.versions }, results };
}

/** The bench's models that are in the registry and can be fetched (fetched now when missing). */
function fetchModels(registry: { models: Record<string, unknown> }): { models: string[]; skipped: Record<string, string> } {
  const models: string[] = [];
  const skipped: Record<string, string> = {};
  for (const name of budget.models) {
    if (!registry.models[name]) {
      skipped[name] = 'not in models/registry.json';
      continue;
    }
    try {
      execFileSync(process.execPath, [join(ROOT, 'dist', 'models', 'fetch.js'), '--quiet', name], { cwd: ROOT, stdio: ['ignore', 'inherit', 'pipe'] });
      models.push(name);
    } catch (err) {
      skipped[name] = `cannot be fetched: ${String((err as { stderr?: Buffer }).stderr ?? err).trim().slice(0, 300)}`;
    }
  }
  for (const [name, why] of Object.entries(skipped)) log(`  (${name} skipped: ${why})`);
  return { models, skipped };
}

async function benchBackground(targets: Target[]) {
  const registry = JSON.parse(readFileSync(join(ROOT, 'models', 'registry.json'), 'utf8'));
  log(`\n## Background removal: matte removeBackground vs onnxruntime-node + sharp (${budget.rounds} x (${budget.bgWarmup} warm-up + ${budget.bgRuns} timed runs))`);
  const { models, skipped } = fetchModels(registry);

  const modelsDir = defaultModelsDir();
  const results: Record<string, any> = {};
  const rows: (string | number)[][] = [];
  for (const model of models) {
    const { width: mw, height: mh } = registry.models[model].input;
    // matte on the photo already at the model's size: about matte's own inference + fixed costs.
    const sizedRounds = [];
    for (let i = 0; i < budget.rounds; i++) {
      const input = modelSizeInput(mw, mh);
      sizedRounds.push(await runWorker<any>('matte-bg', { model, input, inferInput: input, warmup: budget.bgWarmup, runs: budget.bgRuns, threads, control: false, refined: false }));
    }
    const atModelSize = pool(sizedRounds);
    results[`${model} model-size input`] = atModelSize;
    // The model's bare inference: matte's own (the probes build's infer()), else onnxruntime-node's.
    const ownBare: number | undefined = atModelSize.inference?.median;
    log(`  ${model}: matte end to end on a ${mw}x${mh} input ${fmt(atModelSize.timing.median)} ms; matte's bare inference ${fmt(ownBare)} ms`);
    for (const input of [INPUT_FILES.lenna, INPUT_FILES.photo]) {
      const key = `${model} ${input}`;
      const common = { model, input, warmup: budget.bgWarmup, runs: budget.bgRuns, threads };
      const [matteRounds, jsRounds] = await alternate(
        () => runWorker<any>('matte-bg', common),
        () =>
          runWorker<any>('js-matte', {
            ...common,
            // The peer runs the model as its package ships it: for an entry converted at fetch
            // time (isnet: fp16 -> fp32, models/derive.ts), the original kept beside it.
            modelPath: registry.models[model].source.convert ? originalPath(model, modelsDir) : join(modelsDir, `${model}.onnx`),
            entry: registry.models[model],
            // made by the matte-bg worker of the first round
            controlInput: join(OUT, 'outputs', `matte-model-input-${model}-${input.replace(/\.\w+$/, '')}.png`),
          }),
      );
      const matte = pool(matteRounds);
      const js = pool(jsRounds);
      const pairs = [{ name: 'mattes', a: matte.output.file, b: js.output.file, mode: 'alpha' }];
      if (js.control) pairs.push({ name: 'control', a: matte.output.file, b: js.control, mode: 'alpha' });
      const compared = await runWorker<Comparison[]>('compare', { pairs });
      const mad = compared.find((c) => c.name === 'mattes');
      const control = compared.find((c) => c.name === 'control');
      results[key] = { matte, js, compare: compared };
      const bare = ownBare ?? js.inference.median;
      const overBare = ratio(matte.timing.median, bare);
      const overJs = ratio(matte.timing.median, js.timing.median);
      rows.push([
        model,
        `${input} (${matte.output.width}x${matte.output.height})`,
        fmt(matte.timing.median),
        fmt(matte.refinedTiming?.median),
        fmt(js.timing.median),
        `${fmt(ownBare)} / ${fmt(js.inference.median)}`,
        fmt(overBare, 2),
        fmt(ratio(js.timing.median, js.inference.median), 2),
        fmt(overJs, 2),
        fmt(matte.refinedTiming ? ratio(matte.refinedTiming.median, js.timing.median) : undefined, 2),
        fmt(mad?.mad, 2),
        fmt(control?.mad, 3),
        `${fmt(matte.peakRssMB, 0)} / ${fmt(js.peakRssMB, 0)}`,
      ]);
      log(`  ${key}: matte ${fmt(matte.timing.median)} ms (refine on ${fmt(matte.refinedTiming?.median)} ms), JS ${fmt(js.timing.median)} ms, bare inference ${fmt(js.inference.median)} ms`);
      targets.push({ what: `${key}: matte end-to-end / bare inference${ownBare === undefined ? ' (onnxruntime-node)' : ''}`, target: '<= 1.10', measured: fmt(overBare, 2), met: overBare <= 1.1 });
      targets.push({ what: `${key}: matte / JS pipeline`, target: '<= 0.80', measured: fmt(overJs, 2), met: overJs <= 0.8 });
      targets.push({ what: `${key}: mean abs(matte - JS matte)`, target: '<= 2/255', measured: `${fmt(mad?.mad, 2)}/255`, met: mad?.mad != null && mad.mad <= 2 });
    }
  }
  if (rows.length) {
    log(table(['model', 'input', 'matte ms (refine off)', 'matte ms (refine on)', 'JS ms', 'bare inference ms matte/ort-node', 'matte/bare', 'JS/bare', 'matte/JS', 'refine on/JS', 'mean abs diff /255 (refine off)', 'same-input control', 'peak RSS MB m/JS'], rows));
  }
  return { skipped, results };
}

// The staged cut-out (docs/api.md, "Extensions: staged cut-outs"): a shadow and a background image
// in matte's one pass, against matte's plain cut-out of the same photo, and against the same
// composite written with sharp after that plain cut-out (the two-step pipeline it replaces).
const STAGED_SHADOW = { blur: 40, offsetX: 30, offsetY: 45, opacity: 0.5 };

async function benchStaging(targets: Target[]) {
  const registry = JSON.parse(readFileSync(join(ROOT, 'models', 'registry.json'), 'utf8'));
  log(`\n## Staged cut-out: shadow + background image in one pass vs the plain cut-out, and vs the plain cut-out then sharp (${INPUT_FILES.photo}, ${INPUT_FILES.backdrop}, refine on; ${budget.rounds} x (${budget.bgWarmup} warm-up + ${budget.bgRuns} timed runs))`);
  const { models, skipped } = fetchModels(registry);
  const results: Record<string, unknown> = {};
  const rows: (string | number)[][] = [];
  for (const model of models) {
    const common = { warmup: budget.bgWarmup, runs: budget.bgRuns, threads };
    const matteRounds: any[] = [];
    const sharpRounds: any[] = [];
    for (let round = 0; round < budget.rounds; round++) {
      const matte = await runWorker<any>('matte-staged', { ...common, model, input: INPUT_FILES.photo, background: INPUT_FILES.backdrop, shadow: STAGED_SHADOW });
      matteRounds.push(matte);
      sharpRounds.push(await runWorker<any>('sharp-staged', { ...common, cutout: matte.outputs.plain.file, background: INPUT_FILES.backdrop, shadow: STAGED_SHADOW }));
    }
    const pooled = (name: string) => summarise(matteRounds.flatMap((r) => r.timing[name].runs));
    const plain = pooled('plain'), staged = pooled('staged'), stagedPng = pooled('stagedPng');
    const sharpStep = summarise(sharpRounds.flatMap((r) => r.timing.runs));
    const twoStep = plain.median + sharpStep.median;
    const overPlain = ratio(staged.median, plain.median);
    const overTwoStep = ratio(staged.median, twoStep);
    const compared = await runWorker<Comparison[]>('compare', { pairs: [{ name: 'staged', a: matteRounds[0].outputs.staged.file, b: sharpRounds[0].output.file, mode: 'rgb' }] });
    results[model] = { plain, staged, stagedPng, sharpStep, twoStep, overPlain, overTwoStep, compare: compared[0], peakRssMB: { matte: Math.max(...matteRounds.map((r) => r.peakRssMB)), sharp: Math.max(...sharpRounds.map((r) => r.peakRssMB)) } };
    rows.push([model, fmt(plain.median), fmt(staged.median), fmt(stagedPng.median), fmt(sharpStep.median), fmt(twoStep), fmt(overPlain, 2), fmt(overTwoStep, 2), fmt(compared[0]?.mad, 2)]);
    log(`  ${model}: plain ${fmt(plain.median)} ms, staged ${fmt(staged.median)} ms (png ${fmt(stagedPng.median)}), sharp step ${fmt(sharpStep.median)} ms`);
    targets.push({ what: `${model}: staged (shadow + background image) / plain cut-out`, target: '<= 1.30', measured: fmt(overPlain, 2), met: overPlain <= 1.3 });
    targets.push({ what: `${model}: staged in one pass / plain cut-out then sharp`, target: '<= 0.80', measured: fmt(overTwoStep, 2), met: overTwoStep <= 0.8 });
  }
  if (rows.length) {
    log(table(['model', 'plain cut-out ms (png)', 'staged ms (jpeg)', 'staged ms (png)', 'sharp composite ms', 'two-step ms', 'staged/plain', 'staged/two-step', 'mean abs diff vs sharp'], rows));
  }
  return { skipped, shadow: STAGED_SHADOW, results };
}

async function benchHttp(targets: Target[]) {
  log(`\n## HTTP: dist/server/main.js on 127.0.0.1, autocannon from the bench process`);
  if (!existsSync(join(ROOT, 'dist', 'server', 'main.js'))) {
    log('  (skipped: dist/server/main.js is not built)');
    return { skipped: 'dist/server/main.js is not built' };
  }
  const { runHttp } = await import('./http.js');
  // The server loads every benchmarked model that is fetched (the first, u2netp, is its default).
  const modelsDir = defaultModelsDir();
  const models = budget.models.filter((m) => existsSync(join(modelsDir, `${m}.onnx`)));
  if (!models.length) throw new Error(`no model fetched in ${modelsDir} (npm run models)`);
  const http = await runHttp(budget.http, models, (line) => log(line));
  // lib/ warmed with as many jobs as the server's requests (HttpPlan.warmup): both in steady state.
  const lib = await runWorker<any>('lib-throughput', { jobs: 4, amount: budget.http.raw[1], warmup: budget.http.warmup });
  // The same remove-background called on lib/ directly, one job at a time with every core (as a
  // lone server request runs), refinement on (the server's default): the server's time per image
  // (its p50 at one connection) over it.
  const lone: Array<{ model: string; server: number; lib: number; ratio: number }> = [];
  for (const model of models) {
    const run = http.runs.find((r) => r.name === `remove-background ${model}, c=1`);
    if (!run) continue;
    const direct = await runWorker<any>('matte-bg', { model, input: INPUT_FILES.lenna, warmup: 1, runs: model === models[0] ? 8 : 4, threads, control: false });
    const libMs = direct.refinedTiming.median as number;
    lone.push({ model, server: run.p50, lib: libMs, ratio: run.p50 / libMs });
  }
  const c4 = http.runs.find((r) => r.name === 'edit raw, c=4')!;
  const throughput = ratio(c4.perSecond, lib.perSecond);
  log(
    table(
      ['run', 'requests', 'req/s', 'p50 ms', 'p99 ms', '2xx', '503', 'errors', 'server CPU ms/req', 'client CPU ms/req'],
      [
        ...http.runs.map((r) => [r.name, r.requests, fmt(r.perSecond), r.p50, r.p99, r.ok, r.overloaded, r.errors, fmt(r.serverCpuMsPerRequest, 2), fmt(r.clientCpuMsPerRequest, 2)]),
        [`lib/ direct, 4 jobs (${lib.threadsPerJob} thread each)`, lib.amount, fmt(lib.perSecond), fmt(lib.p50), fmt(lib.p99), lib.amount, '-', 0, fmt(lib.cpuMsPerRequest, 2), '-'],
      ],
    ),
  );
  if (lone.length) {
    log(table(['remove-background alone, lenna.png, refine on', 'server p50 ms (c=1)', 'lib/ direct median ms', 'server/lib'], lone.map((l) => [l.model, fmt(l.server), fmt(l.lib), fmt(l.ratio, 2)])));
  }
  log(`  server RSS: ${fmt(http.rssMB.afterWarmup)} MB after warm-up, ${fmt(http.rssMB.afterRawRequests)} MB after ${http.rssMB.rawRequests} raw edits, ${fmt(http.rssMB.afterAll)} MB after the remove-background runs`);
  const errors = http.runs.reduce((n, r) => n + r.errors, 0);
  targets.push({ what: 'HTTP errors (503 counted apart)', target: '0', measured: `${errors} (503: ${http.runs.reduce((n, r) => n + r.overloaded, 0)})`, met: errors === 0 });
  targets.push({ what: 'HTTP raw edit c=4 / lib with 4 jobs', target: '>= 0.90', measured: fmt(throughput, 2), met: throughput >= 0.9 });
  targets.push({ what: `RSS growth over ${http.rssMB.rawRequests} requests`, target: '< 50 MB', measured: `${fmt(http.rssGrowthMB)} MB`, met: http.rssGrowthMB < 50 });
  const ab = http.shareAB;
  log(
    `  remove-background ${models[0]} c=4, two fresh servers alternated over ${ab.rounds} rounds: ${fmt(ab.shared, 2)} req/s with every core for a lone job (${fmt(ab.sharedCpuMs)} ms CPU a request), ` +
      `${fmt(ab.fixed, 2)} req/s with MATTE_JOB_THREADS=${ab.jobThreads} (${fmt(ab.fixedCpuMs)} ms)`,
  );
  const shareRatio = ab.shared / ab.fixed;
  targets.push({ what: `remove-background c=4 (${models[0]}): cores shared / fixed share per job`, target: '>= 1.00 (must not drop)', measured: fmt(shareRatio, 2), met: shareRatio >= 0.995 });
  for (const l of lone) targets.push({ what: `server remove-background alone / lib/ direct (${l.model}, lenna)`, target: '<= 1.10', measured: fmt(l.ratio, 2), met: l.ratio <= 1.1 });
  return { ...http, lib, lone, throughputRatio: throughput };
}

async function benchThumbs(targets: Target[]) {
  const plan = budget.thumbs;
  log(`\n## Thumbnails: matte's server vs IPX (its own sharp), sources from one loopback origin, ${plan.connections} connections, ${plan.rounds} alternated rounds`);
  if (!existsSync(join(ROOT, 'dist', 'server', 'main.js'))) {
    log('  (skipped: dist/server/main.js is not built)');
    return { skipped: 'dist/server/main.js is not built' };
  }
  const { runThumbs } = await import('./thumbs.js');
  const results = await runThumbs(plan, (line) => log(line));
  const rows: (string | number)[][] = [];
  for (const r of results) {
    const ipx = r.arms['IPX GET'];
    for (const arm of ['matte GET', 'matte POST', 'IPX GET'] as const) {
      const a = r.arms[arm];
      const out = r.outputs[arm];
      rows.push([
        `${r.task.id} ${arm}`,
        a.requests,
        fmt(a.perSecond),
        a.p50,
        fmt(a.serverCpuMs, 1),
        arm === 'IPX GET' ? '-' : fmt(ratio(a.perSecond, ipx.perSecond), 2),
        arm === 'IPX GET' ? '-' : fmt(ratio(a.serverCpuMs, ipx.serverCpuMs), 2),
        fmt(ratio(a.serverCpuMs, r.floor.totalMs), 2),
        `${out.width}x${out.height}`,
        out.bytes,
        fmt(r.quality[arm], 2),
      ]);
    }
    rows.push([`${r.task.id} codec floor (1/${r.floor.shrink} decode ${fmt(r.floor.decodeMs, 1)} + encode ${fmt(r.floor.encodeMs, 1)})`, '-', '-', '-', fmt(r.floor.totalMs, 1), '-', '-', '1.00', '-', '-', '-']);
  }
  log(table(['task, server', 'requests', 'req/s', 'p50 ms', 'server CPU ms/req', 'req/s / IPX', 'CPU / IPX', 'CPU / floor', 'output', 'bytes', 'mean abs diff vs full-res reference'], rows));
  for (const r of results) {
    const ipx = r.arms['IPX GET'];
    for (const arm of ['matte GET', 'matte POST'] as const) {
      const a = r.arms[arm];
      const rate = ratio(a.perSecond, ipx.perSecond);
      const cpu = ratio(a.serverCpuMs, ipx.serverCpuMs);
      const floor = ratio(a.serverCpuMs, r.floor.totalMs);
      targets.push({ what: `${r.task.id} ${arm}: req/s matte/IPX (c=${plan.connections})`, target: '>= 1.25', measured: fmt(rate, 2), met: rate >= 1.25 });
      targets.push({ what: `${r.task.id} ${arm}: server CPU a request matte/IPX`, target: '<= 0.80', measured: fmt(cpu, 2), met: cpu <= 0.8 });
      targets.push({ what: `${r.task.id} ${arm}: server CPU a request / codec floor`, target: '<= 1.25', measured: fmt(floor, 2), met: floor <= 1.25 });
      if (a.errors) targets.push({ what: `${r.task.id} ${arm}: errors`, target: '0', measured: String(a.errors), met: false });
    }
    const bytes = ratio(r.outputs['matte GET'].bytes, r.outputs['IPX GET'].bytes);
    targets.push({ what: `${r.task.id} output bytes matte/IPX (${r.task.format} q${r.task.quality})`, target: '<= 1.01', measured: fmt(bytes, 3), met: bytes <= 1.01 });
    const m = r.quality['matte GET'];
    const s = r.quality['IPX GET'];
    targets.push({ what: `${r.task.id} mean abs diff vs full-res reference, matte vs IPX`, target: '<= IPX\'s', measured: `${fmt(m, 2)} vs ${fmt(s, 2)}`, met: m !== null && s !== null && m <= s });
  }
  return { plan, results };
}

async function benchBulk(targets: Target[]) {
  const model = budget.models[0]!;
  log(`\n## Bulk: matte remove-background bucket to bucket (s3rver on loopback) vs lib/ on the same images in memory (${model}, ${threads} jobs each)`);
  execFileSync(process.execPath, [join(ROOT, 'dist', 'models', 'fetch.js'), '--quiet', model], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  const { runBulk } = await import('./bulk.js');
  const bulk = await runBulk({ model, copies: quick ? 24 : 60, rounds: budget.rounds }, log);
  log(table(['what', 'images/s (pooled)'], [[`lib/ in memory, ${bulk.jobs} jobs`, fmt(bulk.libPerSecond, 2)], [`remove-background s3:// -> s3://, --jobs ${bulk.jobs}`, fmt(bulk.commandPerSecond, 2)], ['command / lib', fmt(bulk.ratio, 2)]]));
  targets.push({ what: `bulk bucket-to-bucket / lib/ in memory (${model}, ${bulk.images} images)`, target: '>= 0.90', measured: fmt(bulk.ratio, 2), met: bulk.ratio >= 0.9 });
  return bulk;
}

/** The remove.bg-compatible route against matte's own for the same cut-out (bench/http-removebg.ts). */
async function benchRemoveBgRoute(targets: Target[]) {
  log(`\n## The remove.bg-compatible route: the same cut-out through POST /v1.0/removebg and POST /images/remove-background`);
  if (!existsSync(join(ROOT, 'dist', 'server', 'main.js'))) {
    log('  (skipped: dist/server/main.js is not built)');
    return { skipped: 'dist/server/main.js is not built' };
  }
  const model = budget.models.find((m) => existsSync(join(defaultModelsDir(), `${m}.onnx`)));
  if (!model) throw new Error(`no model fetched in ${defaultModelsDir()} (npm run models)`);
  const { runRemoveBgRoute } = await import('./http-removebg.js');
  const r = await runRemoveBgRoute(budget.removebg, model, (line) => log(line));
  log(
    table(
      [`route (lenna.png, ${model}, PNG, c=1, ${r.rounds} alternated rounds)`, 'requests', 'ms a request', 'server CPU ms a request'],
      [
        ['POST /images/remove-background', r.requestsPerArm, fmt(r.matteMs), fmt(r.matteCpuMs)],
        ['POST /v1.0/removebg', r.requestsPerArm, fmt(r.removeBgMs), fmt(r.removeBgCpuMs)],
      ],
    ),
  );
  targets.push({ what: `POST /v1.0/removebg / POST /images/remove-background (same cut-out, ${model}, c=1), time a request`, target: '<= 1.05', measured: fmt(r.ratio, 3), met: r.ratio <= 1.05 });
  targets.push({ what: `the same, server CPU a request`, target: '<= 1.05', measured: fmt(r.cpuRatio, 3), met: r.cpuRatio <= 1.05 });
  return r;
}

// Responsive images (bench/ops.ts): each extension against the same resize without it.
async function benchResponsive(targets: Target[]) {
  const runs = quick ? 7 : 21;
  log(`\n## Responsive images: each extension / the same resize without it (${INPUT_FILES.photo} -> jpeg q80, alternated run by run in one process, 2 warm-up + ${runs} runs each)`);
  const r = await benchOps({ warmup: 2, runs, threads });
  log(table(['variant', 'base', 'ms median', 'variant / base'], OPS_VARIANTS.map((v) => [v.name, v.base, fmt(r.timings[v.name]!.median), v.name === v.base ? '' : fmt(r.ratios[v.name], 3)])));
  log(`  subject's first crop of the photo (${r.model}'s inference, the matte cached): ${fmt(r.subjectFirstMs)} ms`);
  for (const [name, value] of Object.entries(r.ratios)) targets.push({ what: `${name} / the same resize without it`, target: '<= 1.05', measured: fmt(value, 3), met: value <= 1.05 });
  return r;
}

/** The foreign URL dialects and the result cache (bench/http-dialects.ts). */
async function benchDialects(targets: Target[]) {
  log(`\n## Image URLs of other servers (a 640x480 JPEG to 320 wide WebP q80) and the result cache (a 4000x3000 JPEG to 800 wide WebP q80)`);
  if (!existsSync(join(ROOT, 'dist', 'server', 'main.js'))) {
    log('  (skipped: dist/server/main.js is not built)');
    return { skipped: 'dist/server/main.js is not built' };
  }
  const { runDialects } = await import('./http-dialects.js');
  const r = await runDialects(budget.dialects[0], budget.dialects[1], (line) => log(line));
  log(
    table(
      ['what', 'requests', 'ms a request', 'server CPU ms a request', 'requests/s'],
      [
        [`signed GET, c=1, ${r.rounds} alternated rounds`, r.requestsPerArm, fmt(r.signedMs), fmt(r.signedCpuMs), ''],
        [`Cloudflare URL, the same edit`, r.requestsPerArm, fmt(r.dialectMs), fmt(r.dialectCpuMs), ''],
        ['result cache misses, c=4', r.misses.requests, '', fmt(r.misses.serverCpuMsPerRequest, 2), fmt(r.misses.perSecond, 1)],
        ['result cache hits, c=4', r.hits.requests, '', fmt(r.hits.serverCpuMsPerRequest, 2), fmt(r.hits.perSecond, 1)],
      ],
    ),
  );
  targets.push({ what: 'a dialect URL / the same edit through a signed GET (c=1), time a request', target: '<= 1.03', measured: fmt(r.ratio, 3), met: r.ratio <= 1.03 });
  targets.push({ what: 'a result-cache hit / a miss, server CPU a request (c=4)', target: '<= 0.05', measured: fmt(r.hitCpuShare, 3), met: r.hitCpuShare <= 0.05 });
  targets.push({ what: 'result-cache hits / misses, requests a second (c=4)', target: '>= 10', measured: fmt(r.hitThroughput, 1), met: r.hitThroughput >= 10 });
  return r;
}

async function main(): Promise<void> {
  ensureDirs();
  const started = new Date();
  const machine = {
    cores: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    loadavgAtStart: loadavg(),
  };
  log(`# matte bench${quick ? ' (--quick)' : ''}: ${started.toISOString()}, ${machine.cores} cores, ${machine.cpu}, node ${machine.node}, load ${machine.loadavgAtStart.map((l) => l.toFixed(2)).join(' ')}`);
  const registry = JSON.parse(readFileSync(join(ROOT, 'models', 'registry.json'), 'utf8'));
  const modelSizes = budget.models.filter((m) => registry.models[m]).map((m) => [registry.models[m].input.width, registry.models[m].input.height]);
  const inputs = await runWorker<{ made: string[]; info: Record<string, unknown> }>('inputs', { modelSizes });
  if (inputs.made.length) log(`  made inputs: ${inputs.made.join(', ')}`);

  const targets: Target[] = [];
  const report: Record<string, unknown> = { command: `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`, quick, started: started.toISOString(), machine, inputs: inputs.info };
  if (only.includes('edit')) report.edit = await benchEdit(targets);
  if (only.includes('bg')) report.backgroundRemoval = await benchBackground(targets);
  if (only.includes('staging')) report.staging = await benchStaging(targets);
  if (only.includes('http')) report.http = await benchHttp(targets);
  if (only.includes('thumbs')) report.thumbs = await benchThumbs(targets);
  if (only.includes('removebg')) report.removebgRoute = await benchRemoveBgRoute(targets);
  if (only.includes('dialects')) report.dialects = await benchDialects(targets);
  if (only.includes('bulk')) report.bulk = await benchBulk(targets);
  if (only.includes('ops')) report.ops = await benchResponsive(targets);

  report.loadavgAtEnd = loadavg();
  report.seconds = (Date.now() - started.getTime()) / 1000;
  report.targets = targets;

  log('\n## Targets (ratios are matte / peer)');
  log(table(['what', 'target', 'measured', ''], targets.map((t) => [t.what, t.target, t.measured, t.met === null ? '' : t.met ? 'met' : 'MISSED'])));
  const file = join(OUT, `results-${started.toISOString().replace(/[:.]/g, '-')}${quick ? '-quick' : ''}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2));
  writeFileSync(join(OUT, quick ? 'latest-quick.json' : 'latest.json'), JSON.stringify(report, null, 2));
  log(`\n${Math.round(report.seconds as number)} s; load ${loadavg().map((l) => l.toFixed(2)).join(' ')} at the end; results in ${file}`);
  writeFileSync(join(OUT, quick ? 'latest-quick.md' : 'latest.md'), `${transcript.join('\n')}\n`);
}

main().catch((err) => {
  console.error(`bench: ${err instanceof Error ? err.stack : err}`);
  process.exit(1);
});
