// `matte sign URL [--op JSON...|--ops FILE] [-f FORMAT] ...`: prints a signed GET URL
// (docs/api.md, "Signed URLs") made by the library's signUrl(). With operations it is an edit,
// without them a background removal. The key is the first of MATTE_URL_SIGNING_KEYS (the
// server's own variable) or the first line of --key-file: never an argument, which `ps` and the
// shell's history would show.
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { OUTPUT_FORMATS, signUrl, type Operation, type SignedOptions } from '../lib/index.js';
import { SIGNED_AUTO, type SignedFormat } from '../lib/signed-url.js';
import { operationList } from './edit.js';
import { CliError, fsReason } from './errors.js';
import { parseFormat } from './files.js';
import { parseInteger } from './options.js';

const SIGNED_FORMATS: readonly string[] = [...OUTPUT_FORMATS, SIGNED_AUTO];

interface SignFlags {
  op: string[];
  ops?: string;
  format?: string;
  quality?: number;
  anim?: boolean;
  trim?: boolean;
  refine?: boolean;
  model?: string;
  keyFile?: string;
  base?: string;
  json?: boolean;
}

async function signingKey(flags: SignFlags): Promise<string> {
  if (flags.keyFile !== undefined) {
    let text: string;
    try {
      text = await readFile(flags.keyFile, 'utf8');
    } catch (err) {
      throw new CliError(`--key-file ${flags.keyFile}: ${fsReason(err)}`, 'invalid_option', 'key-file');
    }
    const key = text.split(/\r?\n/).map((l) => l.trim()).find((l) => l !== '' && !l.startsWith('#'));
    if (!key) throw new CliError(`--key-file ${flags.keyFile} holds no key`, 'invalid_option', 'key-file');
    return key;
  }
  const key = (process.env.MATTE_URL_SIGNING_KEYS ?? '').split(',').map((k) => k.trim()).find((k) => k !== '');
  if (!key) throw new CliError('no signing key: set MATTE_URL_SIGNING_KEYS (as for the server; the first key signs) or give --key-file FILE', 'invalid_option', 'key');
  return key;
}

export function signCommand(program: Command): void {
  program
    .command('sign')
    .description('print a signed GET URL of an edit (with operations) or a background removal (without), for a CDN to cache')
    .argument('<url>', 'the input image\'s http: or https: URL (fetched by the server)')
    .option('--op <json>', 'one operation as JSON; repeat it, in order (makes an edit)', (value: string, list: string[]) => [...list, value], [] as string[])
    .option('--ops <file>', 'a JSON file holding the operation list (makes an edit)')
    .option('-f, --format <format>', `the URL's extension: ${SIGNED_FORMATS.join(', ')} (default png; png, webp or auto without operations; auto: the format each browser's Accept takes)`)
    .option('-q, --quality <1-100>', 'edit: quality for jpeg, webp and avif', parseInteger('--quality'))
    .option('--no-anim', 'edit: keep only the first frame of an animation')
    .option('--trim', 'background removal: crop to the subject')
    .option('--no-refine', 'the model\'s matte alone, unrefined')
    .option('--model <name>', 'a model the server loads (default: its default)')
    .option('--key-file <file>', 'a file whose first line is the key (default: the first of MATTE_URL_SIGNING_KEYS)')
    .option('--base <url>', 'the origin the URL starts with (default: MATTE_PUBLIC_URL, else a path alone)')
    .option('--json', 'print {"url": ...} (or the error) as JSON')
    .addHelpText(
      'after',
      `
Examples:
  MATTE_URL_SIGNING_KEYS=... matte sign https://shop.example/p/1.jpg -f webp --base https://img.example.com
  matte sign https://shop.example/p/1.jpg --op '{"resize":{"width":800,"height":600,"fit":"cover","gravity":"subject"}}' -f auto
  matte sign https://shop.example/p/1.jpg --op '{"removeBackground":true}' --op '{"resize":{"width":800}}' -f webp --key-file key.txt`,
    )
    .action(async (url: string, flags: SignFlags) => {
      const edit = flags.op.length > 0 || flags.ops !== undefined;
      const options: SignedOptions = { input: url };
      if (edit) {
        options.operations = (await operationList(flags, url)) as Operation[];
        if (flags.quality !== undefined) options.quality = flags.quality;
        if (flags.anim === false) options.anim = false;
      } else if (flags.quality !== undefined || flags.anim === false) {
        throw new CliError('--quality and --no-anim belong to an edit: give operations too', 'invalid_option', flags.quality !== undefined ? 'quality' : 'anim');
      }
      if (flags.trim) {
        if (edit) throw new CliError('--trim belongs to a background removal; in an edit, use the trim operation', 'invalid_option', 'trim');
        options.trim = true;
      }
      if (flags.refine === false) options.refine = false;
      if (flags.model !== undefined) options.model = flags.model;
      const format = flags.format === undefined ? undefined : (parseFormat(flags.format, SIGNED_FORMATS) as SignedFormat);
      const signed = signUrl(options, { key: await signingKey(flags), format, base: flags.base ?? process.env.MATTE_PUBLIC_URL });
      process.stdout.write(flags.json ? `${JSON.stringify({ url: signed })}\n` : `${signed}\n`);
    });
}
