// `matte edit IN -o OUT --op '{"resize":{"width":800}}' --op '{"blur":2}'` (or --ops file.json):
// runs the operation list through the library's edit() (the same schema and pipeline as
// POST /images/edit) and writes the result; the format comes from OUT's extension or --format.
// `-` as IN reads standard input, `-o -` writes the image to standard output (then --format is
// needed, and the summary goes to standard error so that the image bytes stay alone on stdout).
// Several inputs, a folder, `s3://bucket/prefix/`, or an output folder or prefix make a batch
// (batch.ts), as remove-background runs: results named after their inputs, in the format given
// by --format, else each input's own (PNG for a type matte does not write).
import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { edit, editOptionsSchema, editSteps, FORMAT_CHOICES, loadModel, parseOperations, type FormatChoice } from '../lib/index.js';
import { AUTO_FORMATS, batchOptions, runBatch, type BatchFlags } from './batch.js';
import { digestOf, extensionOf, versionOf, type ModelVersion } from './batch-outputs.js';
import { CliError, describe } from './errors.js';
import { STDIO, exists, formatBytes, formatOfPath, parseFormat, readInput, writeOutput } from './files.js';
import { parseInteger } from './options.js';

interface EditFlags extends BatchFlags {
  op: string[];
  ops?: string;
  format?: string;
  quality?: number;
  anim?: boolean;
  backgroundImage?: string;
}

const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//;

const isAuto = (format: string | undefined) => format?.trim().toLowerCase() === 'auto';

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** One image to one file (or standard input/output), or a batch: several inputs, a folder, a bucket, or an output folder. */
async function isBatch(inputs: string[], output: string): Promise<boolean> {
  if (inputs.length > 1 || SCHEME.test(output) || output.endsWith('/') || inputs.some((input) => SCHEME.test(input))) return true;
  return (inputs[0] !== STDIO && (await isDirectory(inputs[0]!))) || (output !== STDIO && (await isDirectory(output)));
}

/** The operation list from --op values (each one operation, or an array of them) or an --ops file. */
export async function operationList(flags: Pick<EditFlags, 'op' | 'ops'>, input: string): Promise<unknown[]> {
  if (flags.ops !== undefined && flags.op.length) throw new CliError('give the operations with --op or with --ops, not both', 'invalid_option', 'ops');
  if (flags.ops !== undefined) {
    if (flags.ops === STDIO && input === STDIO) throw new CliError('standard input cannot hold both the image and --ops: give one of them as a file', 'invalid_option', 'ops');
    const text = (await readInput(flags.ops)).toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new CliError(`--ops ${flags.ops} is not valid JSON: ${describe(err)}`, 'invalid_json', 'operations');
    }
    if (!Array.isArray(value)) throw new CliError(`--ops ${flags.ops} must hold a JSON array of operations`, 'invalid_operations', 'operations');
    return value;
  }
  if (!flags.op.length) throw new CliError('no operations: give at least one --op \'{"resize":{"width":800}}\' or --ops FILE', 'invalid_operations', 'operations');
  return flags.op.flatMap((text, index) => {
    try {
      const value = JSON.parse(text) as unknown;
      return Array.isArray(value) ? value : [value];
    } catch (err) {
      throw new CliError(`--op number ${index + 1} is not valid JSON (${describe(err)}): ${text}`, 'invalid_json', `operations[${index}]`);
    }
  });
}

export function editCommand(program: Command): void {
  const command = program
    .command('edit')
    .description('apply an ordered list of operations to one image (the operations of POST /images/edit)')
    .argument('<inputs...>', 'image file (JPEG, PNG, WebP, GIF, AVIF/HEIF or TIFF), or - for standard input; several files, folders or s3://bucket/prefix/ for a batch')
    .requiredOption('-o, --output <file>', 'where to write the result, or - for standard output (with --format); its extension chooses the format unless --format is given; for a batch a folder or s3://bucket/prefix/')
    .option('--op <json>', 'one operation as JSON, e.g. \'{"resize":{"width":800}}\'; repeat it, in order', (value: string, list: string[]) => [...list, value], [] as string[])
    .option('--ops <file>', 'a JSON file holding the operation list (an array), or - for standard input')
    .option('-f, --format <format>', `output format: ${FORMAT_CHOICES.join(', ')} (default: from the output's extension; auto: png where the result has transparency, else jpeg, the extension added to -o)`)
    .option('-q, --quality <1-100>', 'quality for jpeg, webp and avif (default: jpeg and webp 80, avif 60)', parseInteger('--quality'))
    .option('--anim', 'keep every frame of an animated input when the format can animate (the default)')
    .option('--no-anim', 'keep only the first frame')
    .option('--background-image <file>', 'the image a backgroundImage operation puts the result over');
  batchOptions(command)
    .addHelpText(
      'after',
      `
Operations (applied in order): resize {width?,height?,fit?}, rotate 90|180|270, flip h|v|hv,
blur 0..250, brightness|contrast|saturation >= 0, background "<css colour>", removeBackground true, trim true.
Extensions for responsive images: resize's fit pad|fill, gravity (north..northwest, subject, attention,
{"x":0..1,"y":0..1}), enlarge, keepBoxAspect, dpr 1..4 and background (pad); sharpen 0..10, gamma 0.1..10,
extend {top,right,bottom,left,background}, crop {top,right,bottom,left}.

Examples:
  matte edit photo.jpg -o small.webp --op '{"resize":{"width":800}}' --op '{"blur":2}'
  matte edit photo.jpg -o cut.png --op '{"removeBackground":true}' --op '{"background":"#fff"}'
  matte edit anim.gif -o first.png --no-anim --ops ops.json
  matte edit photo.jpg -o card.avif --op '{"resize":{"width":400,"height":300,"fit":"cover","gravity":"subject","dpr":2}}' --op '{"sharpen":1}'
  matte edit shoe.jpg -o staged -f auto --background-image studio.jpg --op '{"removeBackground":true}' --op '{"shadow":true}' --op '{"backgroundImage":true}'
  curl -s https://example.com/a.jpg | matte edit - -o - -f webp --op '{"resize":{"width":400}}' > a.webp
  matte edit photos/ -o small/ --op '{"resize":{"width":800}}'           # each keeps its format
  matte edit s3://shop/raw/ -o s3://shop/small/ -f webp --ops ops.json --shard 0/4

A batch exits 0 when every input was done, 1 when any failed (in a bucket the failures are also
written to <output>.matte/failures-<I>-of-<N>.jsonl) or it could not start, 3 when the bucket
store failed (run it again: finished work is skipped).`,
    )
    .action(async (inputs: string[], flags: EditFlags) => {
      if (await isBatch(inputs, flags.output)) return editBatch(inputs, flags);
      const input = inputs[0]!;
      const auto = isAuto(flags.format);
      const format: FormatChoice | undefined = auto ? 'auto' : flags.format !== undefined ? parseFormat(flags.format) : formatOfPath(flags.output);
      if (!format && flags.output === STDIO) throw new CliError('writing to standard output (-o -) needs --format (' + FORMAT_CHOICES.join(', ') + ')', 'invalid_option', 'format');
      if (!format) throw new CliError(`cannot tell the format from "${flags.output}": give --format (${FORMAT_CHOICES.join(', ')}) or a .png, .webp, .jpg, .gif or .avif name`, 'invalid_option', 'format');
      // auto: the extension is the format the job chose, added to the name given.
      if (auto && flags.output !== STDIO && formatOfPath(flags.output)) throw new CliError(`with --format auto, give -o without an image extension ("${flags.output}"): .png or .jpg is added once the format is known`, 'invalid_option', 'output');
      const operations = await operationList(flags, input);
      const candidates = auto && flags.output !== STDIO ? AUTO_FORMATS.map((f) => `${flags.output}.${extensionOf(f)}`) : [flags.output];
      for (const candidate of candidates)
        if (!flags.force && (await exists(candidate))) throw new CliError(`${candidate} already exists (use --force to overwrite)`, 'output_exists', candidate);
      const data = await readInput(input);
      const backgroundImage = flags.backgroundImage === undefined ? undefined : await readInput(flags.backgroundImage);
      const started = performance.now();
      const result = await edit(data, operations, { format, quality: flags.quality, anim: flags.anim, backgroundImage });
      const ms = Math.round(performance.now() - started);
      const output = auto && flags.output !== STDIO ? `${flags.output}.${extensionOf(result.format)}` : flags.output;
      await writeOutput(output, result.data, Boolean(flags.force));
      const summary = { input, output, format: result.format, width: result.width, height: result.height, frames: result.frames, bytes: result.data.length, ms };
      // With the image on stdout, the summary goes to stderr, and only when asked for (--json):
      // a pipeline's stderr stays quiet on success.
      const report = flags.output === STDIO ? process.stderr : process.stdout;
      if (flags.json) report.write(`${JSON.stringify(summary)}\n`);
      else if (flags.output !== STDIO) {
        const frames = result.frames > 1 ? `, ${result.frames} frames` : '';
        report.write(`${output}: ${result.width}x${result.height} ${result.format}${frames}, ${formatBytes(result.data.length)} in ${ms} ms\n`);
      }
    });
}

/** Many inputs: the operation list validated once, then the batch. */
async function editBatch(inputs: string[], flags: EditFlags): Promise<void> {
  if (inputs.includes(STDIO) || flags.output === STDIO || flags.ops === STDIO) throw new CliError('- (standard input or output) works with one input and one output file, not with a batch', 'invalid_option', STDIO);
  if (formatOfPath(flags.output) && !SCHEME.test(flags.output) && !(await isDirectory(flags.output))) {
    throw new CliError(`a batch writes into a folder or s3://bucket/prefix/, and ${flags.output} names a file (end it with / for a folder of that name)`, 'invalid_option', flags.output);
  }
  const format: FormatChoice | undefined = isAuto(flags.format) ? 'auto' : flags.format !== undefined ? parseFormat(flags.format) : undefined;
  const operations = await operationList(flags, '');
  const backgroundImage = flags.backgroundImage === undefined ? undefined : await readInput(flags.backgroundImage);
  const steps = parseOperations(operations);
  if (!editOptionsSchema.safeParse({ quality: flags.quality }).success) throw new CliError(`--quality must be 1..100 (got ${flags.quality})`, 'invalid_option', 'quality');
  const removals = steps.filter((step) => step.op === 'removeBackground');
  // A subject gravity runs the job's model: the removeBackground's, else the default.
  const subjects = steps.some((step) => step.op === 'resize' && step.gravity === 'subject');
  let model: ModelVersion | undefined;
  const stepModels: ModelVersion[] = [];
  await runBatch(inputs, flags, {
    get settings() {
      // The validated steps, not the text: the same operations however they were spelled; the
      // models by their files' sha256 and the background image by its bytes, as remove-background's.
      return { command: 'edit', steps, format: format ?? 'as input', quality: flags.quality, anim: flags.anim, backgroundImage: backgroundImage && digestOf(backgroundImage), model, stepModels };
    },
    format: (item) => format ?? formatOfPath(item.name) ?? 'png',
    // The input is handed over (read in place); handOver would cover the background image too,
    // which every job shares, so with one both are copied.
    run: (data, itemFormat) => editSteps(data, steps, { format: itemFormat, quality: flags.quality, anim: flags.anim, ...(backgroundImage ? { backgroundImage } : { handOver: true }) }),
    // The models loaded once up front, the default last: loadModel makes the model it loads the one
    // a removeBackground operation without its own model (and a subject gravity without one) uses.
    prepare: async () => {
      for (const name of new Set(removals.flatMap((step) => (step.model === undefined ? [] : [step.model])))) stepModels.push(versionOf(await loadModel(name)));
      if (removals.some((step) => step.model === undefined) || (removals.length === 0 && subjects)) model = versionOf(await loadModel());
    },
  });
}
