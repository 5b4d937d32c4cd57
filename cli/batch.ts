// A batch of the command (`remove-background`, `edit` with several inputs or a folder or a bucket):
// inputs (batch-inputs.ts) -> the job -> outputs (batch-outputs.ts), as a bounded pipeline. At most
// `jobs` jobs run at once (each with its share of the cores: lib configure()), and at most
// 2 x jobs + 2 inputs are in flight, so the next inputs are read and the last results written
// while the jobs run, and memory stays bounded whatever the bucket holds. An input's own failure
// (not an image, too large, its result taken) is recorded and the batch goes on; a failure of the
// store or a bug stops the batch (exit 3), and a run again picks up where it stopped.
// Exit code: 0 when every input is done, 1 when some inputs failed or it could not start (bad
// arguments), 3 when the store failed (at the start or part-way): only the last is worth a retry.
import { availableParallelism } from 'node:os';
import type { Command } from 'commander';
import { configure, MatteError, type FormatChoice, type OutputFormat, type Result } from '../lib/index.js';
import { ConfigError, integer } from '../server/config-env.js';
import { BucketClient } from './bucket.js';
import { inputsOf, type BrokenInput, type Item } from './batch-inputs.js';
import { outputsOf, resultName, type Failure, type Outputs } from './batch-outputs.js';
import { CliError, describe, errorBody } from './errors.js';
import { formatBytes } from './files.js';
import { checkFolderOverlap, checkNoOverlap, isBucket, parseLocation, type Location } from './locations.js';
import { createProgress, type FileOutcome, type Progress } from './progress.js';
import { parsePositive } from './options.js';
import { parseShard, resolveShard, type Shard } from './shard.js';

export interface BatchJob {
  /** What a result's marker hashes: everything the user asked for that changes the result. */
  settings: unknown;
  /** The result's format for this input (it names the result; `auto`: once the job chose). */
  format(item: Item): FormatChoice;
  run(data: Buffer, format: FormatChoice): Promise<Result>;
  /** Once, before the first input is read (loading the model: a missing one is one error, not one per input). */
  prepare?(): Promise<void>;
}

export interface BatchFlags {
  output: string;
  jobs?: number;
  force?: boolean;
  json?: boolean;
  shard?: Shard;
  shards?: number;
  maxInputBytes?: number;
  progressEvery?: number;
}

/** The default most bytes an input may have: the server's MATTE_MAX_INPUT_BYTES default. */
export const DEFAULT_MAX_INPUT_BYTES = 25 * 1024 * 1024;
/** Off a terminal, bucket work prints a line per this many inputs. */
export const DEFAULT_PROGRESS_EVERY = 100;

/** The options every batch command takes. */
export function batchOptions(command: Command): Command {
  return command
    .option('-j, --jobs <n>', `images processed at once (default: the cores, ${availableParallelism()} here)`, parsePositive('--jobs'))
    .option('--shard <i/n>', 'take only shard I of N of the inputs (I from 0), by a hash of each input\'s name', parseShard)
    .option('--shards <n>', 'the shard count, the index coming from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job; or set MATTE_SHARDS)', parsePositive('--shards'))
    .option('--max-input-bytes <n>', `an input larger than this fails with input_too_large (default: MATTE_MAX_INPUT_BYTES, else ${DEFAULT_MAX_INPUT_BYTES}, as the server)`, parsePositive('--max-input-bytes'))
    .option('--progress-every <n>', `off a terminal, a progress line per N inputs instead of a line per input (default ${DEFAULT_PROGRESS_EVERY} for bucket work)`, parsePositive('--progress-every'))
    .option('--force', 'overwrite results that already exist (in a bucket: objects matte did not write, and results already done)')
    .option('--json', 'print the results (or the error) as JSON on stdout');
}

/** Waiting room of a fixed number of places, first come first served. */
class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  constructor(size: number) {
    this.free = size;
  }
  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

/** The formats `auto` chooses between: a result may take either name, so both are checked before the job. */
export const AUTO_FORMATS: readonly OutputFormat[] = ['png', 'jpeg'];

/** An input's own failure (recorded, the batch goes on), as opposed to the store's or a bug (the batch stops). */
const isItemFailure = (err: unknown) => err instanceof MatteError || err instanceof CliError;

interface Tally {
  done: number;
  skipped: number;
  failures: Failure[];
  /** Per input, for --json and the order of a local batch's report; kept for local batches only. */
  outcomes?: FileOutcome[];
}

function record(tally: Tally, progress: Progress, outcome: FileOutcome, key: string): void {
  if (outcome.ok && outcome.skipped) tally.skipped++;
  else if (outcome.ok) tally.done++;
  else tally.failures.push({ key, code: outcome.error!.code, message: outcome.error!.message });
  tally.outcomes?.push(outcome);
  const line = outcome.ok
    ? outcome.skipped
      ? `${outcome.input} -> ${outcome.output}: already done`
      : `${outcome.input} -> ${outcome.output}: ${outcome.width}x${outcome.height}, ${formatBytes(outcome.bytes ?? 0)} in ${outcome.ms} ms`
    : `matte: failed ${outcome.error?.message.startsWith(outcome.input) ? outcome.error.message : `${outcome.input}: ${outcome.error?.message}`}`;
  progress.done(outcome, line);
}

async function pipeline(items: AsyncIterable<Item | BrokenInput>, outputs: Outputs, job: BatchJob, o: { jobs: number; maxInputBytes: number }, tally: Tally, progress: Progress): Promise<void> {
  const window = new Slots(o.jobs * 2 + 2);
  const running = new Slots(o.jobs);
  // Results being made now: a second input of the same result name waits for nothing, it is refused.
  const busy = new Map<string, string>();
  const inFlight = new Set<Promise<void>>();
  let fatal: { error: unknown } | undefined;

  const one = async (item: Item) => {
    const format = job.format(item);
    const names = (format === 'auto' ? AUTO_FORMATS : [format]).map((f) => resultName(item.name, f));
    let output = outputs.labelOf(names[0]!);
    const started = performance.now();
    const other = names.map((name) => busy.get(name)).find((label) => label !== undefined);
    if (other !== undefined) {
      record(tally, progress, { input: item.label, output, ok: false, error: { code: 'output_exists', message: `${item.label}: its result ${output} would overwrite the result of ${other}`, path: output } }, item.key);
      return;
    }
    for (const name of names) busy.set(name, item.label);
    try {
      // Already done under any of its names (auto: the format an earlier run chose).
      let skip = false;
      for (const name of names) if ((await outputs.prepare(item, name)) === 'skip') skip = true;
      if (skip) {
        record(tally, progress, { input: item.label, output, ok: true, skipped: true }, item.key);
        return;
      }
      const data = await item.read(o.maxInputBytes);
      await running.acquire();
      let result: Result;
      try {
        result = await job.run(data, format);
      } finally {
        running.release();
      }
      const name = format === 'auto' ? resultName(item.name, result.format) : names[0]!;
      output = outputs.labelOf(name);
      await outputs.write(item, name, result);
      record(tally, progress, { input: item.label, output, ok: true, width: result.width, height: result.height, bytes: result.data.length, ms: Math.round(performance.now() - started) }, item.key);
    } catch (err) {
      if (!isItemFailure(err)) throw err;
      record(tally, progress, { input: item.label, output, ok: false, error: errorBody(err).error }, item.key);
    } finally {
      for (const name of names) busy.delete(name);
    }
  };

  try {
    for await (const item of items) {
      if ('error' in item) {
        record(tally, progress, { input: item.key, ok: false, error: errorBody(item.error).error }, item.key);
        continue;
      }
      await window.acquire();
      if (fatal) {
        window.release();
        break;
      }
      const task: Promise<void> = one(item)
        .catch((error) => {
          fatal ??= { error };
        })
        .finally(() => {
          inFlight.delete(task);
          window.release();
        });
      inFlight.add(task);
    }
  } finally {
    // A failed listing, or a store that failed: what is in flight ends first (its results are whole).
    await Promise.all(inFlight);
  }
  if (fatal) throw fatal.error;
}

/** Runs the batch described by the command's arguments; sets process.exitCode (0, 1 when inputs failed). */
export async function runBatch(inputArgs: string[], flags: BatchFlags, job: BatchJob): Promise<void> {
  const inputs: Location[] = inputArgs.map(parseLocation);
  const output = parseLocation(flags.output);
  checkNoOverlap(inputs, output);
  await checkFolderOverlap(inputs, output);
  const shard = resolveShard(flags.shard, flags.shards);
  const bucketWork = inputs.some(isBucket) || isBucket(output);
  const json = Boolean(flags.json);
  const maxInputBytes = flags.maxInputBytes ?? integer(process.env, 'MATTE_MAX_INPUT_BYTES', DEFAULT_MAX_INPUT_BYTES, 1, 2 ** 31 - 1);

  let client: BucketClient | undefined;
  const bucketClient = () => client!;
  try {
    if (bucketWork) {
      client = await BucketClient.open();
      const seen = new Set<string>();
      for (const location of [...inputs, output]) {
        if (!isBucket(location) || seen.has(location.bucket)) continue;
        seen.add(location.bucket);
        await client.checkBucket(location);
      }
    }
    const source = await inputsOf(inputs, shard, bucketClient);
    const outputs = await outputsOf(output, { client: bucketClient, settings: () => job.settings, force: Boolean(flags.force), shard: shard ?? { index: 0, count: 1 } });
    // A local batch's inputs are known now; a bucket's are counted while the batch runs.
    const known = inputs.some(isBucket) ? undefined : await source.count();
    const jobs = Math.max(1, Math.min(flags.jobs ?? availableParallelism(), known || Infinity));
    configure({ concurrency: jobs });
    if (known !== 0) await job.prepare?.();

    const every = flags.progressEvery ?? (bucketWork ? DEFAULT_PROGRESS_EVERY : undefined);
    const progress = createProgress(known, { json, every, noun: inputs.some(isBucket) ? 'objects' : 'files' });
    if (known === undefined) {
      source.count().then(
        (n) => progress.total(n),
        () => {}, // the eta stays unknown; the listing itself reports a failing store
      );
    }
    const tally: Tally = { done: 0, skipped: 0, failures: [], outcomes: bucketWork ? undefined : [] };
    const started = performance.now();
    try {
      await pipeline(source.items(), outputs, job, { jobs, maxInputBytes }, tally, progress);
    } finally {
      progress.finish();
    }
    const report = await outputs.finish(tally.failures);
    summarise(tally, { json, jobs, seconds: (performance.now() - started) / 1000, output: outputs.label, report, inputOrder: inputArgs, shard, bucketWork });
    if (tally.failures.length) process.exitCode = 1;
  } catch (err) {
    if (isItemFailure(err) || !(err instanceof Error)) throw err;
    if (err instanceof ConfigError) throw new CliError(err.message, 'invalid_option');
    // The store failed (an S3CallError, already reduced to what may be printed) or a bug: one line.
    throw new CliError(describe(err), 'batch_stopped');
  } finally {
    client?.close();
  }
}

function summarise(tally: Tally, o: { json: boolean; jobs: number; seconds: number; output: string; report?: string; inputOrder: string[]; shard?: Shard; bucketWork: boolean }): void {
  const failed = tally.failures.length;
  const total = tally.done + tally.skipped + failed;
  const seconds = Number(o.seconds.toFixed(1));
  const shard = o.shard ? { shard: `${o.shard.index}/${o.shard.count}` } : {};
  if (o.json) {
    const files = tally.outcomes ? { files: inInputOrder(tally.outcomes, o.inputOrder) } : {};
    const report = o.report ? { report: o.report } : {};
    process.stdout.write(`${JSON.stringify({ total, done: tally.done, skipped: tally.skipped, failed, seconds, ...shard, ...report, ...files })}\n`);
    return;
  }
  if (total <= 1 && !o.bucketWork) return;
  const noun = o.bucketWork ? 'inputs' : 'files';
  const already = tally.skipped ? `, ${tally.skipped} already done` : '';
  const where = o.shard ? ` (shard ${o.shard.index}/${o.shard.count})` : '';
  const report = o.report && failed ? `; failures in ${o.report}` : '';
  const stream = failed ? process.stderr : process.stdout;
  stream.write(`${total} ${noun}${where}: ${tally.done} done, ${failed} failed${already} in ${seconds} s (${o.jobs} at a time) -> ${o.output}${report}\n`);
}

/** A local batch's outcomes in the order its inputs were given, whatever order the jobs finished in. */
function inInputOrder(outcomes: FileOutcome[], order: string[]): FileOutcome[] {
  const rank = (input: string) => {
    const i = order.findIndex((arg) => input === arg || input.startsWith(arg.endsWith('/') ? arg : `${arg}/`));
    return i < 0 ? order.length : i;
  };
  return [...outcomes].sort((a, b) => rank(a.input) - rank(b.input) || (a.input < b.input ? -1 : a.input > b.input ? 1 : 0));
}
