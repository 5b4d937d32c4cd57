// `matte remove-background IN... -o DIR`: many files (a directory stands for the images in it), run
// in parallel through the library, one job per core (each job gets its share of the threads, as in
// the server: lib configure()). An existing result is not overwritten without --force; a failure
// names the file and the reason and the others go on; exit code 1 if any file failed.
import { mkdir, readdir, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { extname, join, parse, resolve } from 'node:path';
import type { Command } from 'commander';
import { CHANNELS, configure, loadModel, parseTrimMargin, removeBackground, removeBackgroundOptionsSchema, REMOVE_BACKGROUND_FORMATS, type RemoveBackgroundFormat, type RemoveBackgroundOptions } from '../lib/index.js';
import { CliError, errorBody, fsReason } from './errors.js';
import { exists, formatBytes, IMAGE_EXTENSIONS, parseFormat, readInput, writeOutput } from './files.js';
import { parsePositive } from './options.js';
import { createProgress, type FileOutcome } from './progress.js';
import { stagingOptions, type StagingFlags } from './staging.js';

interface Flags extends StagingFlags {
  output: string;
  trim?: boolean;
  trimMargin?: string;
  channels?: string;
  format: string;
  model?: string;
  jobs?: number;
  force?: boolean;
  json?: boolean;
}

/** One file to process, or an input that failed before processing (missing, unreadable directory). */
type Planned = { input: string; output: string } | { input: string; error: CliError };

/** A result's file: named after its input, with its format's extension (`auto`: the one the job chose). */
const outputPath = (dir: string, input: string, format: string) => join(dir, `${parse(input).name}.${format}`);

/** Expands the arguments: a file stays, a directory becomes its image files (not recursive). */
async function expandInputs(inputs: string[]): Promise<Array<{ input: string } | { input: string; error: CliError }>> {
  const out: Array<{ input: string } | { input: string; error: CliError }> = [];
  for (const input of inputs) {
    let isDirectory = false;
    try {
      isDirectory = (await stat(input)).isDirectory();
    } catch (err) {
      out.push({ input, error: new CliError(`${input}: ${fsReason(err)}`, 'invalid_input', input) });
      continue;
    }
    if (!isDirectory) {
      out.push({ input });
      continue;
    }
    let names: string[];
    try {
      names = (await readdir(input)).sort();
    } catch (err) {
      out.push({ input, error: new CliError(`${input}: cannot read the directory: ${fsReason(err)}`, 'invalid_input', input) });
      continue;
    }
    const images = names.filter((name) => IMAGE_EXTENSIONS.has(extname(name).toLowerCase()));
    if (!images.length) out.push({ input, error: new CliError(`${input}: no image files in the directory`, 'invalid_input', input) });
    for (const name of images) out.push({ input: join(input, name) });
  }
  return out;
}

/** Decides each output path; two inputs with the same name (a.jpg, a.png) would collide. */
async function plan(inputs: Array<{ input: string } | { input: string; error: CliError }>, dir: string, format: RemoveBackgroundFormat, force: boolean): Promise<Planned[]> {
  const taken = new Map<string, string>();
  const planned: Planned[] = [];
  for (const item of inputs) {
    if ('error' in item) {
      planned.push(item);
      continue;
    }
    // With auto, the name without its extension (it is known once the job ran); both candidates are checked.
    const output = outputPath(dir, item.input, format === 'auto' ? '*' : format);
    const other = taken.get(resolve(output));
    if (other !== undefined) {
      planned.push({ input: item.input, error: new CliError(`${item.input}: its result ${output} would overwrite the result of ${other}`, 'output_exists', output) });
      continue;
    }
    taken.set(resolve(output), item.input);
    const candidates = format === 'auto' ? [outputPath(dir, item.input, 'png'), outputPath(dir, item.input, 'jpeg')] : [output];
    const existing = force ? undefined : (await Promise.all(candidates.map(async (c) => ((await exists(c)) ? c : undefined)))).find(Boolean);
    if (existing) {
      planned.push({ input: item.input, error: new CliError(`${item.input}: ${existing} already exists (use --force to overwrite)`, 'output_exists', existing) });
      continue;
    }
    planned.push({ input: item.input, output });
  }
  return planned;
}

async function prepareDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (err) {
    throw new CliError(`cannot create the output directory ${dir}: ${fsReason(err)}`, 'output_error', dir);
  }
  if (!(await stat(dir)).isDirectory()) throw new CliError(`${dir} is not a directory`, 'output_error', dir);
}

// The `model` option of removeBackground comes with the per-request model choice in lib (branch
// `quality`); until the library's options accept it, the model loaded up front (loadModel makes it
// the current one) is the one every job uses.
const optionsTakeModel = 'model' in (removeBackgroundOptionsSchema.shape as Record<string, unknown>);

export function removeBackgroundCommand(program: Command): void {
  program
    .command('remove-background')
    .alias('rmbg')
    .description('remove the background of one or more images, in parallel (POST /images/remove-background)')
    .argument('<inputs...>', 'image files, or directories whose image files are all taken')
    .requiredOption('-o, --output <dir>', 'directory for the results (created when missing); each is named after its input')
    .option('--trim', 'crop each result to the bounding box of its visible pixels')
    .option('--trim-margin <margin>', 'with --trim, a margin around the subject: pixels (30, at most 500) or a share of its box (10%, at most 50%)')
    .option('--channels <channels>', `${CHANNELS.join(' (default) or ')}: the cut-out, or the matte alone as a greyscale image`, 'rgba')
    .option('-f, --format <format>', `${REMOVE_BACKGROUND_FORMATS.join(', ')} (auto: png where a result has transparency, else jpeg)`, 'png')
    .option('-m, --model <name>', 'the model (see `matte models list`; default: MATTE_MODEL, else the registry default)')
    .option('-j, --jobs <n>', `images processed at once (default: the cores, ${availableParallelism()} here)`, parsePositive('--jobs'))
    .option('--size <size>', 'a cap on each result: preview (0.25 MP), medium (1.5), hd (4), full, auto, or megapixels (2.5); the input is decoded no larger than needed')
    .option('--roi <x1,y1,x2,y2>', "only this region can be foreground: pixels of the input (120 or 120px) or percentages (25%)")
    .option('--no-semitransparency', 'a hard matte: alpha 0 or 255, its edge antialiased by one pixel')
    .option('--shadow [type]', 'a shadow under the subject: drop (default), contact, or the shadow operation\'s JSON')
    .option('--place <json>', 'the subject scaled and placed, e.g. \'{"scale":80,"aspectRatio":"1:1"}\'')
    .option('--background <colour>', 'a CSS colour under the cut-out')
    .option('--background-image <file>', 'an image under the cut-out, covered and centred')
    .option('--force', 'overwrite results that already exist')
    .option('--json', 'print the results (or the error) as JSON on stdout')
    .addHelpText(
      'after',
      `
The staging (--size, --shadow, --place, --background, --background-image) is applied in this order
after the cut-out: size, trim, shadow, place, background (docs/api.md, "Extensions: staged cut-outs").
Exit code 0 when every file was done, 1 when any failed (each failure names the file and the reason).

Examples:
  matte remove-background photos/*.jpg -o cutouts
  matte remove-background photos -o cutouts --format webp --trim --model isnet
  matte remove-background shop/*.jpg -o masks --channels alpha
  matte remove-background shop/*.jpg -o products --trim --trim-margin 10%
  matte remove-background shop/*.jpg -o square --shadow --place '{"scale":80,"aspectRatio":"1:1"}' --background '#fff' --format jpeg
  matte remove-background photos -o previews --size preview --background-image studio.jpg --format auto`,
    )
    .action(async (inputs: string[], flags: Flags) => {
      const format = (flags.format.trim().toLowerCase() === 'auto' ? 'auto' : parseFormat(flags.format, REMOVE_BACKGROUND_FORMATS)) as RemoveBackgroundFormat;
      const channels = flags.channels!.trim().toLowerCase();
      if (!(CHANNELS as readonly string[]).includes(channels)) throw new CliError(`--channels must be one of ${CHANNELS.join(', ')}`, 'invalid_option', 'channels');
      if (flags.trimMargin !== undefined) {
        const margin = parseTrimMargin(flags.trimMargin);
        if (typeof margin === 'string') throw new CliError(`--trim-margin ${margin}`, 'invalid_option', 'trimMargin');
        if (!flags.trim) throw new CliError('--trim-margin needs --trim (the margin is around the trimmed subject)', 'invalid_option', 'trimMargin');
      }
      const json = Boolean(flags.json);
      const staging = await stagingOptions(flags);
      await prepareDirectory(flags.output);
      const planned = await plan(await expandInputs(inputs), flags.output, format, Boolean(flags.force));
      const work = planned.filter((p): p is { input: string; output: string } => 'output' in p);

      const jobs = Math.max(1, Math.min(flags.jobs ?? availableParallelism(), work.length || 1));
      configure({ concurrency: jobs });
      // Loaded once up front: a missing or unknown model is one error, not one per file.
      if (work.length) await loadModel(flags.model);
      const options: RemoveBackgroundOptions = { format, trim: Boolean(flags.trim), trimMargin: flags.trimMargin, channels: channels as RemoveBackgroundOptions['channels'], ...staging, ...(optionsTakeModel && flags.model ? ({ model: flags.model } as object) : {}) };

      const progress = createProgress(planned.length, { json });
      const outcomes: FileOutcome[] = [];
      const started = performance.now();
      const record = (outcome: FileOutcome) => {
        outcomes.push(outcome);
        const line = outcome.ok
          ? `${outcome.input} -> ${outcome.output}: ${outcome.width}x${outcome.height}, ${formatBytes(outcome.bytes ?? 0)} in ${outcome.ms} ms`
          : `matte: failed ${outcome.error?.message.startsWith(outcome.input) ? outcome.error.message : `${outcome.input}: ${outcome.error?.message}`}`;
        progress.done(outcome, line);
      };
      for (const p of planned) if ('error' in p) record({ input: p.input, ok: false, error: errorBody(p.error).error });

      let next = 0;
      const worker = async () => {
        while (next < work.length) {
          const { input } = work[next++]!;
          let { output } = work[next - 1]!;
          const t0 = performance.now();
          try {
            const result = await removeBackground(await readInput(input), options);
            if (format === 'auto') output = outputPath(flags.output, input, result.format);
            await writeOutput(output, result.data, Boolean(flags.force));
            record({ input, output, ok: true, width: result.width, height: result.height, bytes: result.data.length, ms: Math.round(performance.now() - t0) });
          } catch (err) {
            record({ input, output, ok: false, error: errorBody(err).error });
          }
        }
      };
      await Promise.all(Array.from({ length: jobs }, worker));
      progress.finish();

      const failed = outcomes.filter((o) => !o.ok).length;
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      // Inputs in the order given, whatever order the jobs finished in.
      const order = new Map(planned.map((p, i) => [p.input, i]));
      outcomes.sort((a, b) => (order.get(a.input) ?? 0) - (order.get(b.input) ?? 0));
      if (json) {
        process.stdout.write(`${JSON.stringify({ total: outcomes.length, done: outcomes.length - failed, failed, seconds: Number(seconds), files: outcomes })}\n`);
      } else if (outcomes.length > 1) {
        const stream = failed ? process.stderr : process.stdout;
        stream.write(`${outcomes.length} files: ${outcomes.length - failed} done, ${failed} failed in ${seconds} s (${jobs} at a time) -> ${flags.output}\n`);
      }
      if (failed) process.exitCode = 1;
    });
}

