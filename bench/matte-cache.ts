// `npm run bench:matte-cache [-- --model isnet --pairs 3]`: the matte computed once
// (docs/api.md, "The matte cache"), on the bench's 12 MP photo through the library (one process,
// the addon alone: no peer here). Three jobs, alternated pair by pair so that load from elsewhere
// lands on all of them:
//   none    removeBackground -> png, no cache (today's cost)
//   first   the same with an empty cache: the lookup (a miss) and the handing back are in the job,
//           the entry's write after it (awaited outside the timing)
//   second  another output of the same image with the cache holding its matte, one of each kind
//           the issue names: webp (another format), background #fff (png), resize 800 (png)
// Targets (issue 27): first <= 1.03 x none, second <= 0.35 x first.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { edit, loadModel, type MatteCache, type MatteCacheOutcome, type Operation, type OutputFormat } from '../lib/index.js';
import { INPUTS, ensureDirs, median, runWorker } from './common.js';
import { INPUT_FILES } from './pipelines.js';

const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const model = option('model', 'isnet');
const pairs = Number(option('pairs', '3'));

class MapCache implements MatteCache {
  readonly entries = new Map<string, Uint8Array>();
  stored = 0;
  get(key: string) {
    return this.entries.get(key);
  }
  put(key: string, entry: Uint8Array) {
    this.entries.set(key, entry);
  }
  report(outcome: MatteCacheOutcome) {
    if (outcome === 'stored' || outcome === 'dropped') this.stored++;
  }
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

async function main(): Promise<void> {
  ensureDirs();
  const path = join(INPUTS, INPUT_FILES.photo);
  if (!existsSync(path)) await runWorker('inputs', { modelSizes: [] });
  const photo = await readFile(path);
  await loadModel(model);
  const cutOut = (matteCache?: MatteCache) => edit(photo, [{ removeBackground: true }], { format: 'png', matteCache, timeout: 0 });
  const variants: Record<string, { ops: Operation[]; format: OutputFormat }> = {
    webp: { ops: [{ removeBackground: true }], format: 'webp' },
    background: { ops: [{ removeBackground: true }, { background: '#fff' }], format: 'png' },
    resize: { ops: [{ removeBackground: true }, { resize: { width: 800 } }], format: 'png' },
  };
  await cutOut(); // warm-up: the model's session, libvips' first use
  const none: number[] = [];
  const first: number[] = [];
  const second: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let pair = 0; pair < pairs; pair++) {
    const cache = new MapCache();
    const runFirst = async () => {
      first.push(await timed(() => cutOut(cache)));
      for (let i = 0; i < 1000 && cache.stored === 0; i++) await new Promise((r) => setTimeout(r, 5));
      for (const [name, { ops, format }] of Object.entries(variants)) second[name]!.push(await timed(() => edit(photo, ops, { format, matteCache: cache, timeout: 0 })));
    };
    const runNone = async () => none.push(await timed(() => cutOut()));
    if (pair % 2 === 0) {
      await runNone();
      await runFirst();
    } else {
      await runFirst();
      await runNone();
    }
  }
  const ms = (values: number[]) => `${Math.round(median(values))} ms (${values.map(Math.round).join(', ')})`;
  console.log(`# matte cache bench: ${model}, ${INPUT_FILES.photo}, ${pairs} alternated pairs; ${availableParallelism()} cores, ${cpus()[0]?.model}, node ${process.version}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`none    ${ms(none)}`);
  console.log(`first   ${ms(first)}  ${(median(first) / median(none)).toFixed(3)} x none (target <= 1.03)`);
  for (const [name, runs] of Object.entries(second)) console.log(`second ${name.padEnd(10)} ${ms(runs)}  ${(median(runs) / median(first)).toFixed(3)} x first (target <= 0.35)`);
}

await main();
