// One batch of the fuzzer, in a child process of test/fuzz/run.ts so that a crash kills only the
// batch: the parent holds the case announced last and saves it. Each case is announced before it
// runs ('start', with the whole case) and reported after ('done'); at the end the batch reports
// memory (RSS, and libvips' live objects and tracked memory) measured after warm-up and at the end.
import { existsSync } from 'node:fs';
import { edit } from '../../lib/index.js';
import { addon } from '../../lib/native.js';
import { modelPath } from '../../lib/models.js';
import { runCase, type FuzzCase } from './case.js';
import { mutate, Rng } from './mutate.js';
import { brokenPlan, invalidOperations, limits, outputFormat, validOperations } from './operations.js';
import { makeSeeds } from './seeds.js';
import { parseOperations } from '../../lib/schema.js';

export interface BatchConfig {
  rngSeed: number;
  iterations: number;
  timeoutMs: number;
}

export type WorkerMessage =
  | { type: 'start'; index: number; fuzzCase: FuzzCase }
  | { type: 'done'; index: number; label: string; problem?: string; ms: number }
  | { type: 'end'; memory: MemoryReport };

export interface Counters {
  objects: number;
  trackedBytes: number;
  trackedAllocations: number;
  openFiles: number;
}

export interface MemoryReport {
  /** After the first quarter of the batch (caches, the model and the allocator have settled). */
  warm: { rss: number; counters?: Counters };
  end: { rss: number; counters?: Counters };
}

const send = (m: WorkerMessage) => new Promise<void>((resolve) => process.send!(m, undefined, {}, () => resolve()));

// The addon's leak counters (native/counters.cc); absent from an older build.
const counters = (addon as unknown as { counters?: () => Counters }).counters;

async function settle(): Promise<{ rss: number; counters?: Counters }> {
  // Finished jobs' Buffers are freed by their finalisers: collect them first.
  for (let i = 0; i < 3; i++) {
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((r) => setImmediate(r));
  }
  // libvips' workers free their per-thread buffers (vips_thread_shutdown, tracked memory) after
  // their task function returns, which can be after the sink they served has returned to the
  // job: a job that has just finished may still have buffers on its way back. Wait (bounded) until
  // the tracked memory stops falling, so that only memory that stays counts as a leak.
  let now = counters?.();
  for (let i = 0; now && i < 40; i++) {
    await new Promise((r) => setTimeout(r, 25));
    const next = counters!();
    if (next.trackedBytes >= now.trackedBytes && i >= 3) {
      now = next;
      break;
    }
    now = next;
  }
  return { rss: process.memoryUsage().rss, counters: now };
}

function makeCase(rng: Rng, seeds: Array<{ name: string; data: Buffer }>, allowModel: boolean): FuzzCase {
  const seed = rng.pick(seeds);
  const others = seeds.map((s) => s.data);
  const { data, mutations } = rng.chance(0.9) ? mutate(seed.data, rng, others) : { data: seed.data, mutations: [] };
  const roll = rng.next();
  const options = { format: outputFormat(rng), quality: 1 + rng.int(100), anim: rng.chance(0.7), limits: limits(rng) };
  // One case in five is given a budget of a few milliseconds: it is stopped part-way (job_timeout).
  const budgetMs = rng.chance(0.2) ? rng.pick([1, 3, 10, 30, 100]) : undefined;
  if (roll < 0.75) {
    const operations = validOperations(rng, allowModel, true);
    const background = operations.some((op) => 'backgroundImage' in op) ? { backgroundIsInput: true as const } : {};
    return { kind: 'edit', seed: seed.name, mutations, input: data, operations, options: { ...options, format: rng.chance(0.1) ? 'auto' : options.format }, budgetMs, ...background };
  }
  if (roll < 0.85) {
    return { kind: 'invalid-operations', seed: seed.name, mutations, input: data, operations: invalidOperations(rng), options };
  }
  const steps = parseOperations(validOperations(rng, false));
  return { kind: 'plan', seed: seed.name, mutations, input: data, plan: brokenPlan(rng, steps, options.format), budgetMs };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2]!) as BatchConfig;
  const rng = new Rng(config.rngSeed);
  const seeds = await makeSeeds();
  // removeBackground is fuzzed only when the default model is fetched (setup fetches it).
  const allowModel = existsSync(modelPath(process.env.MATTE_MODEL || 'u2netp'));
  // Warm-up, not judged: the model session, every decoder and encoder, the largest sizes the
  // fuzzer asks for. The allocator's high-water mark is reached here, so RSS after it is comparable.
  for (const seed of seeds) await edit(seed.data, [{ resize: { width: 256, height: 256, fit: 'cover' } }], { format: 'webp' }).catch(() => undefined);
  const first = seeds[0]!.data;
  await edit(first, [{ resize: { width: 256 } }], { format: 'avif' });
  if (allowModel) await edit(first, [{ resize: { width: 256 } }, { removeBackground: true }]);
  const warmAt = Math.floor(config.iterations / 4);
  let warm = await settle();
  for (let index = 0; index < config.iterations; index++) {
    if (index === warmAt) warm = await settle();
    const fuzzCase = makeCase(rng, seeds, allowModel);
    await send({ type: 'start', index, fuzzCase });
    const started = performance.now();
    const outcome = await runCase(fuzzCase, config.timeoutMs);
    await send({ type: 'done', index, label: outcome.label, problem: outcome.problem, ms: performance.now() - started });
  }
  await send({ type: 'end', memory: { warm, end: await settle() } });
  process.disconnect();
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
