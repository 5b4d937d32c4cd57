// The fuzzer of the native entry (issue 9): mutated seed images of every accepted type with random
// valid and invalid operation lists, through lib's edit() and the addon's run() directly.
//
//   npm run fuzz                      # 10 minutes, a random seed
//   npm run fuzz -- --seconds 90 --seed 1234
//   npm run fuzz -- --batches 13 --workers 2 --seed 1234   # the same cases on any machine
//
// Each batch runs in its own child process (test/fuzz/worker.ts), --workers of them at a time
// (one case runs on little more than a core): a crash or a sanitizer report ends the batch, not
// the fuzzer, and the case in flight is saved. Every case must end in a result or a typed
// MatteError within the deadline; a case that breaks this (a crash, a hang, an untyped or
// `internal` error) is written to test/fuzz/crashers/ as <id>.bin (the input) + <id>.json (the
// rest of the case and what went wrong), which crashers.test.ts replays on every test run. Each
// batch also checks for leaks: libvips' live objects and tracked memory return to their warm
// values, and RSS stays within a bound (not under ASan, whose quarantine holds freed memory on
// purpose). Exits non-zero on any finding.
import { fork } from 'node:child_process';
import { createHash, randomInt } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { caseToJson, type FuzzCase } from './case.js';
import type { BatchConfig, MemoryReport, WorkerMessage } from './worker.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const workerPath = fileURLToPath(new URL('./worker.js', import.meta.url));

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '600' },
    // At most this many batches (with a seed, the same cases whatever the machine's speed).
    batches: { type: 'string', default: String(Number.MAX_SAFE_INTEGER) },
    workers: { type: 'string', default: '1' },
    seed: { type: 'string' },
    batch: { type: 'string', default: '250' },
    // The job budget handed to the library; the fuzzer's own deadline is well beyond it.
    'timeout-ms': { type: 'string', default: '10000' },
    out: { type: 'string', default: join(root, 'test/fuzz/crashers') },
    'max-findings': { type: 'string', default: '20' },
  },
});

const underAsan = /libasan/.test(process.env.LD_PRELOAD ?? '');
const seconds = Number(args.seconds);
const batchSize = Number(args.batch);
const maxBatches = Number(args.batches);
const workers = Math.max(1, Number(args.workers) || 1);
const timeoutMs = Number(args['timeout-ms']);
// A case past this is a hang: the budget, plus room for a shared machine (and ASan's slowdown).
const deadlineMs = (timeoutMs + 20_000) * (underAsan ? 3 : 1);
const runSeed = args.seed !== undefined ? Number(args.seed) : randomInt(2 ** 31);
const maxFindings = Number(args['max-findings']);
// Memory bounds of one batch, warm to end (see the header).
const RSS_GROWTH_LIMIT = 128 * 1024 * 1024;
const OBJECT_SLACK = 2;
const TRACKED_SLACK = 1024 * 1024;

const SANITIZER_REPORT = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:/;

interface Finding {
  reason: string;
  fuzzCase?: FuzzCase;
  detail?: string;
}

const stats = {
  cases: 0,
  batches: 0,
  labels: new Map<string, number>(),
  slowest: { ms: 0, seed: '', kind: '' },
  findings: [] as Finding[],
  memory: [] as MemoryReport[],
};

function save(finding: Finding): void {
  stats.findings.push(finding);
  console.log(`FINDING: ${finding.reason}${finding.fuzzCase ? ` (seed ${finding.fuzzCase.seed}, ${finding.fuzzCase.kind})` : ''}`);
  if (finding.detail) console.log(finding.detail.split('\n').slice(0, 30).join('\n'));
  if (!finding.fuzzCase || stats.findings.length > maxFindings) return;
  const json = caseToJson(finding.fuzzCase);
  const id = createHash('sha1').update(finding.fuzzCase.input).update(json).digest('hex').slice(0, 12);
  const name = `${finding.reason.split(':')[0]!.replace(/[^a-z0-9]+/gi, '-')}-${id}`;
  mkdirSync(args.out!, { recursive: true });
  writeFileSync(join(args.out!, `${name}.bin`), finding.fuzzCase.input);
  const record = JSON.parse(json) as Record<string, unknown>;
  writeFileSync(join(args.out!, `${name}.json`), JSON.stringify({ found: finding.reason, detail: finding.detail?.slice(0, 4000), ...record }, null, 2) + '\n');
  console.log(`  saved as ${join(args.out!, name)}.{bin,json}`);
}

function runBatch(config: BatchConfig, index: number): Promise<void> {
  return new Promise((resolve) => {
    const reports = batchReports(index);
    const child = fork(workerPath, [JSON.stringify(config)], {
      execArgv: ['--expose-gc'],
      serialization: 'advanced', // cases hold Buffers, NaN and undefined
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      // Fewer glibc arenas: RSS then follows what is allocated rather than how many threads did it.
      env: { ...process.env, ...reports.env, MALLOC_ARENA_MAX: '2' },
    });
    let current: FuzzCase | undefined;
    let timer: NodeJS.Timeout | undefined;
    let hung = false;
    let output = '';
    const collect = (d: Buffer) => {
      output += d.toString();
      if (output.length > 200_000) output = output.slice(-100_000);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    const arm = (ms = deadlineMs) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        hung = true;
        child.kill('SIGKILL');
      }, ms);
    };
    arm(4 * deadlineMs); // making the seeds and the warm-up
    child.on('message', (m: WorkerMessage) => {
      if (m.type === 'start') {
        current = m.fuzzCase;
        arm();
      } else if (m.type === 'done') {
        stats.cases++;
        stats.labels.set(m.label, (stats.labels.get(m.label) ?? 0) + 1);
        if (m.ms > stats.slowest.ms) stats.slowest = { ms: Math.round(m.ms), seed: current?.seed ?? '', kind: current?.kind ?? '' };
        if (m.problem) save({ reason: `unexpected: ${m.problem.split('\n')[0]}`, fuzzCase: current, detail: m.problem });
        current = undefined;
      } else if (m.type === 'end') {
        stats.memory.push(m.memory);
        checkMemory(m.memory);
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      stats.batches++;
      output += sanitizerLogs(reports.dir);
      const report = SANITIZER_REPORT.exec(output);
      if (hung) save({ reason: `hang: no outcome within ${deadlineMs} ms`, fuzzCase: current });
      else if (report) save({ reason: `sanitizer: ${report[0]}`, fuzzCase: current, detail: output.slice(Math.max(0, report.index - 200)) });
      else if (code !== 0 || signal) save({ reason: `crash: worker exited with ${signal ?? code}`, fuzzCase: current, detail: output.slice(-4000) });
      resolve();
    });
  });
}

// The sanitizers' report files (scripts/asan-env.sh sets log_path): each batch writes into a
// directory of its own, so that a report is charged to the batch that made it while another runs.
const sanitizerRoot = process.env.MATTE_SANITIZER_LOG_DIR;

/** Batch `index`'s report directory (made) and the environment that points the sanitizers there. */
function batchReports(index: number): { dir?: string; env: NodeJS.ProcessEnv } {
  if (!sanitizerRoot) return { env: {} };
  const dir = join(sanitizerRoot, `fuzz-batch-${index}`);
  mkdirSync(dir, { recursive: true });
  const moved = (options: string | undefined) => options?.replaceAll(`log_path=${sanitizerRoot}/`, `log_path=${dir}/`);
  return { dir, env: { MATTE_SANITIZER_LOG_DIR: dir, ASAN_OPTIONS: moved(process.env.ASAN_OPTIONS), UBSAN_OPTIONS: moved(process.env.UBSAN_OPTIONS) } };
}

/** The reports of one batch, read and removed. */
function sanitizerLogs(dir: string | undefined): string {
  if (!dir) return '';
  let text = '';
  for (const name of readdirSync(dir)) text += readFileSync(join(dir, name), 'utf8');
  rmSync(dir, { recursive: true, force: true });
  return text;
}

function checkMemory(m: MemoryReport): void {
  const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;
  const w = m.warm.counters, e = m.end.counters;
  if (w && e) {
    if (e.objects > w.objects + OBJECT_SLACK) save({ reason: `leak: libvips objects ${w.objects} -> ${e.objects} over a batch` });
    if (e.trackedBytes > w.trackedBytes + TRACKED_SLACK) save({ reason: `leak: libvips tracked memory ${mb(w.trackedBytes)} -> ${mb(e.trackedBytes)}` });
    if (e.openFiles > w.openFiles) save({ reason: `leak: libvips open files ${w.openFiles} -> ${e.openFiles}` });
  }
  if (!underAsan && m.end.rss - m.warm.rss > RSS_GROWTH_LIMIT) save({ reason: `leak: RSS ${mb(m.warm.rss)} -> ${mb(m.end.rss)} over a batch` });
}

const started = Date.now();
const most = maxBatches < Number.MAX_SAFE_INTEGER ? `at most ${maxBatches} batches, ` : '';
console.log(`fuzz: seed ${runSeed}, ${most}${seconds} s, batches of ${batchSize}, ${workers} at a time, budget ${timeoutMs} ms, deadline ${deadlineMs} ms${underAsan ? ', under ASan' : ''}`);
let nextBatch = 0;
const more = () => nextBatch < maxBatches && Date.now() - started < seconds * 1000 && stats.findings.length <= maxFindings;
await Promise.all(
  Array.from({ length: workers }, async () => {
    while (more()) {
      // Each batch its own PRNG seed, derived from the run's: one batch can be re-run alone.
      const b = nextBatch++;
      await runBatch({ rngSeed: (runSeed + b * 0x9e3779b9) >>> 0, iterations: batchSize, timeoutMs }, b);
    }
  }),
);

const elapsed = (Date.now() - started) / 1000;
const labels = [...stats.labels.entries()].sort((a, b) => b[1] - a[1]).map(([l, n]) => `${l} ${n}`).join(', ');
const last = stats.memory.at(-1);
console.log(`fuzz: ${stats.cases} cases in ${stats.batches} batches, ${elapsed.toFixed(0)} s (${(stats.cases / elapsed).toFixed(1)}/s)`);
console.log(`fuzz: outcomes: ${labels}`);
console.log(`fuzz: slowest case ${stats.slowest.ms} ms (${stats.slowest.seed}, ${stats.slowest.kind})`);
if (last) {
  const rss = stats.memory.map((m) => `${Math.round(m.warm.rss / 1048576)}->${Math.round(m.end.rss / 1048576)}`).join(' ');
  console.log(`fuzz: RSS MB per batch (warm->end): ${rss}; libvips objects at the end ${last.end.counters?.objects ?? 'n/a'}`);
}
console.log(`fuzz: ${stats.findings.length} finding(s)`);
process.exit(stats.findings.length ? 1 : 0);
