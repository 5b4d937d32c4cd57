// `matte edit IN -o OUT --op '{"resize":{"width":800}}' --op '{"blur":2}'` (or --ops file.json):
// runs the operation list through the library's edit() (the same schema and pipeline as
// POST /images/edit) and writes the result; the format comes from OUT's extension or --format.
// `-` as IN reads standard input, `-o -` writes the image to standard output (then --format is
// needed, and the summary goes to standard error so that the image bytes stay alone on stdout).
import type { Command } from 'commander';
import { edit, OUTPUT_FORMATS, type OutputFormat } from '../lib/index.js';
import { CliError, describe } from './errors.js';
import { STDIO, exists, formatBytes, formatOfPath, parseFormat, readInput, writeOutput } from './files.js';
import { parseInteger } from './options.js';

interface EditFlags {
  output: string;
  op: string[];
  ops?: string;
  format?: string;
  quality?: number;
  anim?: boolean;
  force?: boolean;
  json?: boolean;
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
  program
    .command('edit')
    .description('apply an ordered list of operations to one image (the operations of POST /images/edit)')
    .argument('<input>', 'image file (JPEG, PNG, WebP, GIF, AVIF/HEIF or TIFF), or - for standard input')
    .requiredOption('-o, --output <file>', 'where to write the result, or - for standard output (with --format); its extension chooses the format unless --format is given')
    .option('--op <json>', 'one operation as JSON, e.g. \'{"resize":{"width":800}}\'; repeat it, in order', (value: string, list: string[]) => [...list, value], [] as string[])
    .option('--ops <file>', 'a JSON file holding the operation list (an array), or - for standard input')
    .option('-f, --format <format>', `output format: ${OUTPUT_FORMATS.join(', ')} (default: from the output's extension)`)
    .option('-q, --quality <1-100>', 'quality for jpeg and webp (default 80)', parseInteger('--quality'))
    .option('--anim', 'keep every frame of an animated input when the format can animate (the default)')
    .option('--no-anim', 'keep only the first frame')
    .option('--force', 'overwrite the output file when it exists')
    .option('--json', 'print the result (or the error) as JSON on stdout')
    .addHelpText(
      'after',
      `
Operations (applied in order): resize {width?,height?,fit?}, rotate 90|180|270, flip h|v|hv,
blur 0..250, brightness|contrast|saturation >= 0, background "<css colour>", removeBackground true, trim true.

Examples:
  matte edit photo.jpg -o small.webp --op '{"resize":{"width":800}}' --op '{"blur":2}'
  matte edit photo.jpg -o cut.png --op '{"removeBackground":true}' --op '{"background":"#fff"}'
  matte edit anim.gif -o first.png --no-anim --ops ops.json
  curl -s https://example.com/a.jpg | matte edit - -o - -f webp --op '{"resize":{"width":400}}' > a.webp`,
    )
    .action(async (input: string, flags: EditFlags) => {
      const format: OutputFormat | undefined = flags.format !== undefined ? parseFormat(flags.format) : formatOfPath(flags.output);
      if (!format && flags.output === STDIO) throw new CliError('writing to standard output (-o -) needs --format (' + OUTPUT_FORMATS.join(', ') + ')', 'invalid_option', 'format');
      if (!format) throw new CliError(`cannot tell the format from "${flags.output}": give --format (${OUTPUT_FORMATS.join(', ')}) or a .png, .webp, .jpg, .gif or .avif name`, 'invalid_option', 'format');
      const operations = await operationList(flags, input);
      if (!flags.force && (await exists(flags.output))) throw new CliError(`${flags.output} already exists (use --force to overwrite)`, 'output_exists', flags.output);
      const data = await readInput(input);
      const started = performance.now();
      const result = await edit(data, operations, { format, quality: flags.quality, anim: flags.anim });
      const ms = Math.round(performance.now() - started);
      await writeOutput(flags.output, result.data, Boolean(flags.force));
      const summary = { input, output: flags.output, format, width: result.width, height: result.height, frames: result.frames, bytes: result.data.length, ms };
      // With the image on stdout, the summary goes to stderr, and only when asked for (--json):
      // a pipeline's stderr stays quiet on success.
      const report = flags.output === STDIO ? process.stderr : process.stdout;
      if (flags.json) report.write(`${JSON.stringify(summary)}\n`);
      else if (flags.output !== STDIO) {
        const frames = result.frames > 1 ? `, ${result.frames} frames` : '';
        report.write(`${flags.output}: ${result.width}x${result.height} ${format}${frames}, ${formatBytes(result.data.length)} in ${ms} ms\n`);
      }
    });
}
