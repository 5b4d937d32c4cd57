// The HTTP bench's small raw edit, called on lib/ directly with `jobs` jobs in flight (the
// baseline of "server throughput at concurrency 4 >= 0.9x lib with 4 jobs").
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configure, edit } from '../../lib/index.js';
import { INPUTS, finish, median, memory, workerArgs, type WorkerArgs } from '../common.js';
import { SMALL_EDIT } from '../pipelines.js';

interface Args extends WorkerArgs {
  jobs: number;
  amount: number;
  warmup: number;
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  // What a lib user running `jobs` jobs at once does (docs/api.md, "Capacity and shutdown": no oversubscription).
  const { threadsPerJob } = configure({ concurrency: args.jobs });
  const input = readFileSync(join(INPUTS, SMALL_EDIT.input));
  const one = () => edit(input, SMALL_EDIT.operations, { format: SMALL_EDIT.format, quality: SMALL_EDIT.quality });
  for (let i = 0; i < args.warmup; i++) await one();

  const latencies: number[] = [];
  let started = 0;
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const lane = async () => {
    while (started < args.amount) {
      started++;
      const t0 = process.hrtime.bigint();
      await one();
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: args.jobs }, lane));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  latencies.sort((a, b) => a - b);
  finish(args, {
    jobs: args.jobs,
    threadsPerJob,
    amount: args.amount,
    seconds,
    perSecond: args.amount / seconds,
    cpuMsPerRequest: (used.user + used.system) / 1000 / args.amount,
    p50: median(latencies),
    p99: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))],
    ...memory(),
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
