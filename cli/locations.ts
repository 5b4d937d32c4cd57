// Where a batch reads and writes: a local path, or `s3://bucket/prefix/` (a prefix of keys in a
// bucket, reached with the store's settings: server/config-scale.ts's s3Connection). Any other
// `scheme://` is refused by name, so a typo (`s4://`, `gs://`) never becomes a local directory.
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { BUCKET_NAME } from '../server/config-scale.js';
import { CliError } from './errors.js';

export interface BucketLocation {
  kind: 'bucket';
  bucket: string;
  /** '' (the whole bucket) or a prefix ending with '/'. */
  prefix: string;
  /** s3://bucket/prefix, as shown to the user. */
  url: string;
}

export interface PathLocation {
  kind: 'path';
  path: string;
}

export type Location = BucketLocation | PathLocation;

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//;

/**
 * A command-line argument as a location. A bucket's prefix always names a folder: `s3://shop/raw`
 * is `s3://shop/raw/`, so that it never also takes `raw2/...`.
 */
export function parseLocation(text: string): Location {
  const scheme = SCHEME.exec(text)?.[1];
  if (scheme === undefined) return { kind: 'path', path: text };
  if (scheme.toLowerCase() !== 's3') throw new CliError(`${text}: unknown scheme "${scheme}://" (give a file, a folder or s3://bucket/prefix/)`, 'invalid_option', text);
  const rest = text.slice(scheme.length + 3);
  const slash = rest.indexOf('/');
  const bucket = slash < 0 ? rest : rest.slice(0, slash);
  if (!BUCKET_NAME.test(bucket)) throw new CliError(`${text}: "${bucket}" is not a bucket name (3..63 of a-z, 0-9, '.', '-')`, 'invalid_option', text);
  let prefix = slash < 0 ? '' : rest.slice(slash + 1).replace(/^\/+/, '');
  if (prefix !== '' && !prefix.endsWith('/')) prefix += '/';
  if (Buffer.byteLength(prefix) > 900) throw new CliError(`${text}: the prefix is longer than 900 bytes (a key is at most 1024)`, 'invalid_option', text);
  return { kind: 'bucket', bucket, prefix, url: `s3://${bucket}/${prefix}` };
}

export const isBucket = (location: Location): location is BucketLocation => location.kind === 'bucket';

/**
 * Refuses an output that would be read back as input: an output prefix inside an input prefix (or
 * the same), and an input prefix inside the output prefix (results would land among the inputs).
 * Checked before anything is listed or written. Local folders are not walked recursively, so a
 * result folder inside an input folder is never read back.
 */
export function checkNoOverlap(inputs: Location[], output: Location): void {
  for (const input of inputs) {
    if (input.kind === 'bucket' && output.kind === 'bucket' && input.bucket === output.bucket) {
      if (output.prefix.startsWith(input.prefix)) throw new CliError(`the output ${output.url} is inside the input ${input.url}: its results would be read as inputs; choose a prefix outside it`, 'invalid_option', output.url);
      if (input.prefix.startsWith(output.prefix)) throw new CliError(`the input ${input.url} is inside the output ${output.url}: results would be written among the inputs; choose a prefix outside it`, 'invalid_option', input.url);
    }
  }
}

/** The real path `path` has or would have: its nearest existing ancestor's, with the rest added. */
async function realPathOf(path: string): Promise<string> {
  const absolute = resolve(path);
  try {
    return await realpath(absolute);
  } catch {
    const parent = dirname(absolute);
    return parent === absolute ? absolute : join(await realPathOf(parent), basename(absolute));
  }
}

/**
 * Refuses an output folder that is an input folder or inside one, by real paths (so a link, `.`
 * or `../x` is no way around it): with --force its results would replace the inputs' neighbours
 * (a.jpg's cut-out over an unrelated a.png). Input files, not folders, are the user's explicit choice.
 */
export async function checkFolderOverlap(inputs: Location[], output: Location): Promise<void> {
  if (output.kind !== 'path') return;
  const out = await realPathOf(output.path);
  for (const input of inputs) {
    if (input.kind !== 'path' || !(await stat(input.path).then((s) => s.isDirectory(), () => false))) continue;
    const folder = await realpath(input.path);
    if (out === folder || out.startsWith(folder.endsWith(sep) ? folder : folder + sep)) {
      throw new CliError(`the output ${output.path} is the input folder ${input.path} or inside it: its results could overwrite files there; choose a folder outside it`, 'invalid_option', output.path);
    }
  }
}
