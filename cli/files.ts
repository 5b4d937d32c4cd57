// Reading inputs and writing results for the commands: plain-language reasons for file errors,
// and no result file overwritten unless --force (the write itself refuses an existing file, so a
// file created meanwhile is not clobbered either).
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, link, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import { dirname, extname, join } from 'node:path';
import { OUTPUT_FORMATS, type OutputFormat } from '../lib/index.js';
import { CliError, fsReason } from './errors.js';

const EXTENSIONS: Record<string, OutputFormat> = {
  '.png': 'png',
  '.webp': 'webp',
  '.jpg': 'jpeg',
  '.jpeg': 'jpeg',
  '.gif': 'gif',
  '.avif': 'avif',
};

/** File extensions taken as images when a directory is given as input. */
export const IMAGE_EXTENSIONS = new Set(['.png', '.webp', '.jpg', '.jpeg', '.gif', '.avif', '.heic', '.heif', '.tif', '.tiff']);

/** The output format named by a file's extension, or undefined. */
export function formatOfPath(path: string): OutputFormat | undefined {
  return EXTENSIONS[extname(path).toLowerCase()];
}

export function parseFormat(value: string, allowed: readonly string[] = OUTPUT_FORMATS): OutputFormat {
  const format = value.toLowerCase() === 'jpg' ? 'jpeg' : value.toLowerCase();
  if (!allowed.includes(format)) throw new CliError(`--format must be one of ${allowed.join(', ')} (got "${value}")`, 'invalid_option', 'format');
  return format as OutputFormat;
}

/** `-` as a file name: standard input for an input, standard output for a result. */
export const STDIO = '-';

export async function readInput(path: string): Promise<Buffer> {
  if (path === STDIO) return readStdin();
  try {
    return await readFile(path);
  } catch (err) {
    throw new CliError(`cannot read ${path}: ${fsReason(err)}`, 'invalid_input', path);
  }
}

async function readStdin(): Promise<Buffer> {
  // A terminal would wait for typed bytes: nobody means that.
  if (process.stdin.isTTY) throw new CliError('"-" reads the image from standard input, which is a terminal: pipe or redirect a file into it', 'invalid_input', STDIO);
  try {
    return await buffer(process.stdin);
  } catch (err) {
    throw new CliError(`cannot read standard input: ${fsReason(err)}`, 'invalid_input', STDIO);
  }
}

export async function exists(path: string): Promise<boolean> {
  if (path === STDIO) return false;
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes a result; refuses an existing file unless force. The bytes go to a hidden temporary file
 * beside the result first, which then takes the result's name in one step (link: fails if the name
 * exists; rename with --force): a run stopped midway (Ctrl-C, a full disk) never leaves a truncated
 * image under the result's name, nor destroys the file --force was replacing. The temporary name
 * is short whatever the result's, so a name the file system takes never fails for its temporary
 * file; and whatever happens, the failure reported is the write's (never its clean-up's).
 */
export async function writeOutput(path: string, data: Buffer, force: boolean): Promise<void> {
  if (path === STDIO) return writeStdout(data);
  const temporary = join(dirname(path), `.matte-${process.pid}-${randomBytes(6).toString('hex')}.partial`);
  try {
    await writeFile(temporary, data, { flag: 'wx' });
    if (force) await rename(temporary, path);
    else await link(temporary, path).catch((err: NodeJS.ErrnoException) => {
      // A file system without hard links (vfat, some network mounts): an exclusive copy instead.
      if (err.code === 'EEXIST') throw err;
      return copyFile(temporary, path, constants.COPYFILE_EXCL);
    });
  } catch (err) {
    throw new CliError(`cannot write ${path}: ${fsReason(err)}`, 'output_error', path);
  } finally {
    await rm(temporary, { force: true }).catch(() => {});
  }
}

function writeStdout(data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (err: unknown) => reject(new CliError(`cannot write to standard output: ${fsReason(err)}`, 'output_error', STDIO));
    process.stdout.once('error', fail);
    process.stdout.write(data, (err) => {
      process.stdout.off('error', fail);
      if (err) fail(err);
      else resolve();
    });
  });
}

/** "12.3 kB" */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(2)} MB`;
}
