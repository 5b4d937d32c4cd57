// One library job, a pipeline of bench/pipelines.ts (P1-P5) or a thumbnail of bench/thumbs.ts (T1,
// T2), timed in a process of its own: the CPU time a job (process.cpuUsage over `runs` jobs after
// `warmup`, libvips' threads included) and the median wall time of one. bench/debian13.ts runs it
// on two systems (Debian 12's libvips and Debian 13's) and compares.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configure, edit } from '../../lib/index.js';
import { INPUTS, finish, median, workerArgs, type WorkerArgs } from '../common.js';
import { EXTENSIONS, PIPELINES } from '../pipelines.js';
import { THUMB_TASKS } from '../thumbs.js';

interface Args extends WorkerArgs {
  job: string;
  threads: number;
  warmup: number;
  runs: number;
  /** Where the last job's output is written, as <job>.<extension>. */
  outDir: string;
}

export interface JobCost {
  job: string;
  threads: number;
  runs: number;
  cpuMs: number;
  wallMs: number;
  output: { file: string; bytes: number; width: number; height: number; frames: number };
}

function jobSpec(id: string) {
  const pipeline = PIPELINES.find((p) => p.id === id);
  if (pipeline) return pipeline;
  const thumb = THUMB_TASKS.find((t) => t.id === id);
  if (thumb) return { input: thumb.input, operations: [{ resize: { width: thumb.width } }], format: thumb.format, quality: thumb.quality };
  throw new Error(`unknown job ${id}`);
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  const spec = jobSpec(args.job);
  configure({ concurrency: 1, threads: args.threads });
  const input = readFileSync(join(INPUTS, spec.input));
  const one = () => edit(input, spec.operations, { format: spec.format, quality: spec.quality });
  for (let i = 0; i < args.warmup; i++) await one();
  const walls: number[] = [];
  let last: Awaited<ReturnType<typeof one>> | undefined;
  const cpu = process.cpuUsage();
  for (let i = 0; i < args.runs; i++) {
    const start = process.hrtime.bigint();
    last = await one();
    walls.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const used = process.cpuUsage(cpu);
  mkdirSync(args.outDir, { recursive: true });
  const file = join(args.outDir, `${args.job}-t${args.threads}.${EXTENSIONS[spec.format]}`);
  writeFileSync(file, last!.data);
  const result: JobCost = {
    job: args.job,
    threads: args.threads,
    runs: args.runs,
    cpuMs: (used.user + used.system) / 1000 / args.runs,
    wallMs: median(walls),
    output: { file, bytes: last!.data.length, width: last!.width, height: last!.height, frames: last!.frames ?? 1 },
  };
  finish(args, result);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
