// `node dist/bench/ops-instructions.js [--runs=N]`: bench/ops.ts's variants counted in instructions
// (valgrind's callgrind, every thread), which other work on the machine does not change, where
// timings on a shared machine wander by more than the 5% they are held to. Each variant runs
// twice under callgrind, in processes of its own: the same set-up and one warm run, then N runs or
// none; the difference over N is a run's instructions, compared with its base's.
// --smc-check=all: liborc's generated code (libvips' integer shrink) is otherwise not seen as new
// code under valgrind and crashes. Caveat: valgrind hides the CPU's SHA extensions, so the subject's sha256 of the input (its matte
// cache key) counts several times what it costs in time (bench/README.md, "Responsive images").
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, WORKERS, ensureDirs } from './common.js';
import { OPS_VARIANTS, type OpsVariant } from './ops.js';
import { INPUT_FILES } from './pipelines.js';

const runs = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 2);
/** --only=attention,sharpen: those variants (and their bases) alone. */
const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7).split(',');
const variants = OPS_VARIANTS.filter((v) => !only || v.name === v.base || only.some((o) => v.name.includes(o)));
const scratch = mkdtempSync(join(tmpdir(), 'matte-ops-count-'));
const entries = join(scratch, 'entries.json');

/** The instructions callgrind collected in one worker process. */
function count(variant: OpsVariant, n: number): number {
  const args = JSON.stringify({ input: INPUT_FILES.photo, entries, variant, runs: n, resultFile: join(scratch, 'result.json') });
  const child = spawnSync('valgrind', ['--tool=callgrind', '--smc-check=all', `--callgrind-out-file=${join(scratch, 'callgrind.out')}`, process.execPath, join(WORKERS, 'matte-ops-count.js'), args], { cwd: ROOT, encoding: 'utf8' });
  const collected = /Collected : (\d+)/.exec(child.stderr ?? '');
  if (child.status !== 0 || !collected) throw new Error(`callgrind on ${variant.name}: ${child.stderr?.split('\n').slice(-6).join('\n')}`);
  return Number(collected[1]);
}

function main(): void {
  ensureDirs();
  const subject = OPS_VARIANTS.find((v) => v.name.startsWith('subject'))!;

  execFileSync(process.execPath, [join(WORKERS, 'matte-ops-count.js'), JSON.stringify({ input: INPUT_FILES.photo, entries, variant: subject, runs: 0, seed: true, resultFile: join(scratch, 'seed.json') })], { cwd: ROOT, stdio: 'inherit' });
  // A run's instructions: a variant's total with N runs less its total with none (the set-up and
  // the warm run: the first call's one-off costs, e.g. the addon's own sha256 for the cache's keys).
  const perRun = new Map<string, number>();
  for (const variant of variants) {
    perRun.set(variant.name, (count(variant, runs) - count(variant, 0)) / runs);
    process.stdout.write(`  ${variant.name}: ${(perRun.get(variant.name)! / 1e6).toFixed(1)} M instructions a run\n`);
  }
  process.stdout.write(`\n| variant | base | base a run (M) | variant a run (M) | variant / base |\n|---|---|---|---|---|\n`);
  for (const variant of variants.filter((v) => v.name !== v.base)) {
    const [mine, base] = [perRun.get(variant.name)!, perRun.get(variant.base)!];
    process.stdout.write(`| ${variant.name} | ${variant.base} | ${(base / 1e6).toFixed(0)} | ${(mine / 1e6).toFixed(0)} | ${(mine / base).toFixed(3)} |\n`);
  }
  rmSync(scratch, { recursive: true, force: true });
  process.stdout.write(`(valgrind --tool=callgrind, ${runs} counted runs a variant, one libvips thread)\n`);
}

main();
