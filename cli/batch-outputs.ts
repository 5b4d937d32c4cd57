// Where a batch writes: a local folder, or `s3://bucket/prefix/`. A result's name is its input's
// relative name with the extension of its format (raw/shoes/a.JPG -> cutouts/shoes/a.png).
//
// In a bucket every result carries a marker (object metadata): the hash of the job's settings, a
// hash of its input's relative name and the input's version (its ETag). A result whose marker
// names this input, this version and these settings is done: skipped (one HeadObject), so a batch
// run again (a killed pod, a retried Job index) never redoes finished work. A result of another
// input of the same name (a.jpg and a.png both write a.png), or an object matte did not write, is
// not overwritten (the second input fails with output_exists; --force overwrites objects matte did
// not write and redoes done work). Failures are written as JSON lines (key, code, message) to
// `<prefix>.matte/failures-<I>-of-<N>.jsonl`, one report per shard, replaced on every run.
// In a local folder, as before: an existing file is not overwritten without --force.
import { createHash } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { OutputFormat, Result } from '../lib/index.js';
import type { BucketClient } from './bucket.js';
import { CliError, fsReason } from './errors.js';
import { exists, writeOutput } from './files.js';
import { OWN_PREFIX, type Item } from './batch-inputs.js';
import type { BucketLocation, Location } from './locations.js';
import { shardKey, type Shard } from './shard.js';

/** One line of the failure report. */
export interface Failure {
  key: string;
  code: string;
  message: string;
}

export interface Outputs {
  /** s3://bucket/prefix/ or the folder, as shown to the user. */
  readonly label: string;
  /** Where the result of `name` goes, as shown to the user. */
  labelOf(name: string): string;
  /** Before the job: 'skip' when the result is already there, else 'run'; a CliError when the result must not be written. */
  prepare(item: Item, name: string): Promise<'run' | 'skip'>;
  write(item: Item, name: string, result: Result): Promise<void>;
  /** Writes the failure report (when the outputs keep one) and says where. */
  finish(failures: Failure[]): Promise<string | undefined>;
}

/** The file extension of a format. */
export const extensionOf = (format: OutputFormat): string => (format === 'jpeg' ? 'jpg' : format);

/** The result's relative name: the input's, with the format's extension. */
export function resultName(inputName: string, format: OutputFormat): string {
  return `${shardKey(inputName)}.${extensionOf(format)}`;
}

/** A model as a result's settings name it: a model file replaced under the same name is another model. */
export interface ModelVersion {
  name: string;
  sha256: string;
}

export const versionOf = (model: { name: string; sha256: string }): ModelVersion => ({ name: model.name, sha256: model.sha256 });

/** The sha256 of what the settings name by content (a background image). */
export const digestOf = (data: Uint8Array | string): string => createHash('sha256').update(data).digest('base64url');

/** The settings a result was made with, as the marker's hash (what the user asked for, and the model). */
export function settingsHash(settings: unknown): string {
  return createHash('sha256').update(JSON.stringify(settings)).digest('base64url').slice(0, 32);
}

const SETTINGS_META = 'matte-settings';
const SOURCE_META = 'matte-source';
const VERSION_META = 'matte-source-version';

/** The longest key a bucket takes (S3's limit, in UTF-8 bytes), and the longest relative name a folder output takes. */
export const MAX_KEY_BYTES = 1024;
/** The longest name of one file or folder (NAME_MAX of Linux file systems). */
const MAX_SEGMENT_BYTES = 255;

/**
 * The one rule for a result's relative name, in a folder or in a bucket: segments that are names
 * (no empty, `.` or `..` one, so no leading `/` either), no NUL, at most MAX_KEY_BYTES with the
 * prefix (a bucket's key), and in a folder no segment longer than a file name may be. A stored key
 * may hold any of these (AWS keeps them literally, stores that normalise paths move them), so an
 * input's name is checked before its job runs: it fails alone, the batch goes on.
 */
function checkResultName(item: Item, name: string, where: { prefixBytes: number; maxSegmentBytes?: number }): void {
  const segments = name.split('/');
  const refusal = name.includes('\0')
    ? 'holds a NUL character'
    : segments.some((segment) => segment === '' || segment === '.' || segment === '..')
      ? 'has an empty, "." or ".." path segment'
      : where.prefixBytes + Buffer.byteLength(name) > MAX_KEY_BYTES
        ? `is longer than ${MAX_KEY_BYTES} bytes`
        : where.maxSegmentBytes !== undefined && segments.some((segment) => Buffer.byteLength(segment) > where.maxSegmentBytes!)
          ? `has a segment longer than ${where.maxSegmentBytes} bytes, the longest file name`
          : undefined;
  if (refusal) throw new CliError(`${item.label}: its result's name ${refusal}`, 'invalid_input', item.key);
}

const sourceHash = (name: string) => createHash('sha256').update(name, 'utf8').digest('base64url').slice(0, 32);

class BucketOutputs implements Outputs {
  readonly label: string;
  private hash: string | undefined;

  constructor(
    private readonly client: BucketClient,
    private readonly location: BucketLocation,
    private readonly settingsOf: () => unknown,
    private readonly force: boolean,
    private readonly shard: Shard,
  ) {
    this.label = location.url;
  }

  labelOf(name: string): string {
    return `${this.location.url}${name}`;
  }

  /** Computed on first use: the settings are complete once the job is prepared (the model's name). */
  private get settings(): string {
    return (this.hash ??= settingsHash(this.settingsOf()));
  }

  async prepare(item: Item, name: string): Promise<'run' | 'skip'> {
    checkResultName(item, name, { prefixBytes: Buffer.byteLength(this.location.prefix) });
    const meta = await this.client.metadata(this.location.bucket, this.location.prefix + name);
    if (!meta) return 'run';
    const source = meta[SOURCE_META];
    if (source !== undefined && source !== sourceHash(item.name)) {
      throw new CliError(`${this.labelOf(name)} holds the result of another input of the same name`, 'output_exists', this.labelOf(name));
    }
    if (source === undefined && !this.force) throw new CliError(`${this.labelOf(name)} already exists and matte did not write it (use --force to overwrite)`, 'output_exists', this.labelOf(name));
    if (!this.force && meta[SETTINGS_META] === this.settings && meta[VERSION_META] === item.version) return 'skip';
    return 'run';
  }

  async write(item: Item, name: string, result: Result): Promise<void> {
    await this.client.put(this.location.bucket, this.location.prefix + name, result.data, result.mediaType, {
      [SETTINGS_META]: this.settings,
      [SOURCE_META]: sourceHash(item.name),
      [VERSION_META]: item.version,
    });
  }

  async finish(failures: Failure[]): Promise<string> {
    const key = `${this.location.prefix}${OWN_PREFIX}failures-${this.shard.index}-of-${this.shard.count}.jsonl`;
    const body = Buffer.from(failures.map((f) => `${JSON.stringify(f)}\n`).join(''));
    await this.client.put(this.location.bucket, key, body, 'application/x-ndjson', {});
    return `s3://${this.location.bucket}/${key}`;
  }
}

class FolderOutputs implements Outputs {
  /** Results of this run: a second input of the same result name is refused, --force or not. */
  private readonly taken = new Map<string, string>();

  constructor(
    private readonly dir: string,
    private readonly force: boolean,
  ) {}

  get label(): string {
    return this.dir;
  }

  labelOf(name: string): string {
    return join(this.dir, name);
  }

  async prepare(item: Item, name: string): Promise<'run' | 'skip'> {
    checkResultName(item, name, { prefixBytes: 0, maxSegmentBytes: MAX_SEGMENT_BYTES });
    const output = this.labelOf(name);
    const other = this.taken.get(output);
    if (other !== undefined) throw new CliError(`${item.label}: its result ${output} would overwrite the result of ${other}`, 'output_exists', output);
    this.taken.set(output, item.label);
    if (!this.force && (await exists(output))) throw new CliError(`${item.label}: ${output} already exists (use --force to overwrite)`, 'output_exists', output);
    return 'run';
  }

  async write(_item: Item, name: string, result: Result): Promise<void> {
    const output = this.labelOf(name);
    if (name.includes('/')) {
      try {
        await mkdir(dirname(output), { recursive: true });
      } catch (err) {
        throw new CliError(`cannot create ${dirname(output)}: ${fsReason(err)}`, 'output_error', output);
      }
    }
    await writeOutput(output, result.data, this.force);
  }

  async finish(): Promise<undefined> {
    return undefined;
  }
}

/** Creates a local folder when missing; refuses a file. */
async function prepareFolder(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (err) {
    throw new CliError(`cannot create the output directory ${dir}: ${fsReason(err)}`, 'output_error', dir);
  }
  if (!(await stat(dir)).isDirectory()) throw new CliError(`${dir} is not a directory`, 'output_error', dir);
}

export async function outputsOf(location: Location, options: { client: () => BucketClient; settings: () => unknown; force: boolean; shard: Shard }): Promise<Outputs> {
  if (location.kind === 'bucket') return new BucketOutputs(options.client(), location, options.settings, options.force, options.shard);
  await prepareFolder(location.path);
  return new FolderOutputs(location.path, options.force);
}
