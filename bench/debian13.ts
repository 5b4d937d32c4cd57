// Debian 13's libvips (8.16) against Debian 12's (8.14), the same checkout built on each: the host
// runs this checkout, a Debian 13 root made by bench/debian13.sh runs its own clone of it (chroot).
// Each job of bench/workers/job-cost.ts runs in a new process on one side, then on the other, the
// order swapped every round, so that whatever else loads the machine lands on both. Prints the
// medians over the rounds, the ratios (Debian 13 / Debian 12), the output bytes and the mean
// absolute difference between the two sides' outputs (decoded by sharp, in a process without matte).
//   node dist/bench/debian13.js --root=/work/trixie [--rounds=5] [--jobs=P1,T1] [--threads=1,2]
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { OUT, WORKERS, median, runWorker } from './common.js';
import { INPUT_FILES } from './pipelines.js';
import type { JobCost } from './workers/job-cost.js';

type Side = 'debian12' | 'debian13';

/** Timed jobs a process (after `warmup`): about two seconds of work each at one thread. */
const JOBS: Record<string, { runs: number; warmup: number }> = {
  P1: { runs: 10, warmup: 2 },
  P2: { runs: 6, warmup: 2 },
  P3: { runs: 3, warmup: 1 },
  P4: { runs: 4, warmup: 1 },
  P5: { runs: 3, warmup: 1 },
  T1: { runs: 40, warmup: 5 },
  T2: { runs: 15, warmup: 3 },
};
const THUMB_INPUTS: Record<string, string> = { T1: INPUT_FILES.thumbSource, T2: INPUT_FILES.photo };

function option(name: string, fallback: string): string {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg ? arg.slice(name.length + 3) : fallback;
}

const root = option('root', '/work/trixie');
const rounds = Number(option('rounds', '5'));
const jobs = option('jobs', Object.keys(JOBS).join(',')).split(',');
const threadCounts = option('threads', '1,2').split(',').map(Number);
// The clone inside the root, and the environment a chroot starts with (the host's is not Debian 13's).
const CHROOT_SRC = '/src';
const CHROOT_ENV = ['HOME=/root', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'LANG=C.UTF-8'];

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited with ${code}`))));
  });
}

/** One process of job-cost on one side, at the same niceness on both. */
async function measure(side: Side, job: string, threads: number): Promise<JobCost> {
  const id = `${side}-${job}-t${threads}-${process.pid}-${Date.now()}.json`;
  const args = { job, threads, ...JOBS[job]! };
  if (side === 'debian12') {
    const resultFile = join(OUT, `.result-${id}`);
    await run('nice', ['-n', '10', process.execPath, join(WORKERS, 'job-cost.js'), JSON.stringify({ ...args, outDir: join(OUT, 'debian13', side), resultFile })]);
    return readResult(resultFile, '');
  }
  const inside = `${CHROOT_SRC}/bench/out`;
  const resultFile = `${inside}/.result-${id}`;
  const worker = `${CHROOT_SRC}/dist/bench/workers/job-cost.js`;
  await run('nice', ['-n', '10', 'chroot', root, '/usr/bin/env', '-i', ...CHROOT_ENV, 'node', worker, JSON.stringify({ ...args, outDir: `${inside}/debian13/${side}`, resultFile })]);
  return readResult(join(root, resultFile), root);
}

function readResult(file: string, prefix: string): JobCost {
  const result = JSON.parse(readFileSync(file, 'utf8')) as JobCost;
  rmSync(file);
  result.output.file = prefix + result.output.file;
  return result;
}

const ratio = (a: number, b: number) => (a / b).toFixed(3);

async function main(): Promise<void> {
  const results = new Map<string, Record<Side, JobCost[]>>();
  for (let round = 0; round < rounds; round++) {
    const order: Side[] = round % 2 === 0 ? ['debian12', 'debian13'] : ['debian13', 'debian12'];
    for (const job of jobs) {
      for (const threads of threadCounts) {
        const key = `${job} t${threads}`;
        const row = results.get(key) ?? { debian12: [], debian13: [] };
        results.set(key, row);
        for (const side of order) row[side].push(await measure(side, job, threads));
      }
    }
    console.error(`debian13: round ${round + 1}/${rounds} done`);
  }

  const pairs = [...results].map(([key, row]) => ({ name: key, a: row.debian12.at(-1)!.output.file, b: row.debian13.at(-1)!.output.file, mode: 'rgb' }));
  const diffs = await runWorker<Array<{ name: string; mad: number | null; sameSize?: boolean; error?: string }>>('compare', { pairs });
  const thumbs = [...results].filter(([key]) => key.startsWith('T'));
  const quality = await runWorker<Array<Array<{ mad: number }>>>('thumbs-quality', {
    tasks: thumbs.map(([key, row]) => ({ input: THUMB_INPUTS[key.split(' ')[0]!]!, outputs: [row.debian12.at(-1)!.output.file, row.debian13.at(-1)!.output.file] })),
  });

  console.log(`${rounds} rounds, alternated; medians of each side's per-process figures; ratio = Debian 13 (8.16) / Debian 12 (8.14)`);
  console.log('| job | CPU a job, ms (12 / 13) | ratio (per-round range) | wall a job, ms (12 / 13) | ratio | bytes (12 / 13) | size | MAD 12 vs 13 |');
  console.log('|---|---|---|---|---|---|---|---|');
  [...results].forEach(([key, row], i) => {
    const cpu = { a: median(row.debian12.map((r) => r.cpuMs)), b: median(row.debian13.map((r) => r.cpuMs)) };
    const perRound = row.debian13.map((r, round) => r.cpuMs / row.debian12[round]!.cpuMs);
    const wall = { a: median(row.debian12.map((r) => r.wallMs)), b: median(row.debian13.map((r) => r.wallMs)) };
    const a = row.debian12.at(-1)!.output;
    const b = row.debian13.at(-1)!.output;
    const size = a.width === b.width && a.height === b.height && a.frames === b.frames ? `${a.width}x${a.height}${a.frames > 1 ? `x${a.frames}` : ''}` : `${a.width}x${a.height}x${a.frames} / ${b.width}x${b.height}x${b.frames}`;
    const diff = diffs[i]!;
    const mad = diff.error ?? (diff.mad === null ? 'sizes differ' : diff.mad.toFixed(3));
    console.log(`| ${key} | ${cpu.a.toFixed(1)} / ${cpu.b.toFixed(1)} | ${ratio(cpu.b, cpu.a)} (${Math.min(...perRound).toFixed(2)}-${Math.max(...perRound).toFixed(2)}) | ${wall.a.toFixed(1)} / ${wall.b.toFixed(1)} | ${ratio(wall.b, wall.a)} | ${a.bytes} / ${b.bytes} | ${size} | ${mad} |`);
  });
  if (thumbs.length) {
    console.log('\nThumbnails against the full-resolution reference (bench/workers/thumbs-quality.ts), mean absolute difference:');
    thumbs.forEach(([key], i) => console.log(`- ${key}: Debian 12 ${quality[i]![0]!.mad.toFixed(3)}, Debian 13 ${quality[i]![1]!.mad.toFixed(3)}`));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
