// What a batch reads: local files and folders (a folder stands for its image files, not recursive),
// and `s3://bucket/prefix/` (every object under the prefix, listed lazily). Each input has a name
// relative to where it was found (a file's own name; the key less the prefix), from which its
// result's name and its shard are computed, and a version its result's marker names (an object's
// ETag; a file's size and modification time).
import type { Stats } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { tooLarge, type BucketClient } from './bucket.js';
import { CliError, fsReason } from './errors.js';
import { IMAGE_EXTENSIONS, readInput } from './files.js';
import type { BucketLocation, Location } from './locations.js';
import { shardOf, type Shard } from './shard.js';

export interface Item {
  /** Relative to the prefix or folder it was found in: the result's name and the shard come from it. */
  name: string;
  /** The object's key or the file's path: what messages and the failure report name. */
  key: string;
  /** What progress lines show: s3://bucket/key or the path. */
  label: string;
  /** The source's version, for the result's marker. */
  version: string;
  /** Its bytes (more than maxBytes: the item's failure, input_too_large). */
  read(maxBytes: number): Promise<Buffer>;
}

/** An input that failed before it could be read (a missing file, a folder without images). */
export interface BrokenInput {
  key: string;
  error: CliError;
}

/** Keys under `.matte/` are matte's own (failure reports of a batch that wrote there), never inputs. */
export const OWN_PREFIX = '.matte/';

export interface Inputs {
  /** The inputs of this shard, in order; a failure to list stops the batch. */
  items(): AsyncIterable<Item | BrokenInput>;
  /** How many items() yields (computed apart, for an eta), if that can be known. */
  count(): Promise<number>;
}

function inShard(name: string, shard: Shard | undefined): boolean {
  return !shard || shardOf(name, shard.count) === shard.index;
}

/** Local files and folders; each folder is read when the batch starts (a folder's listing is small). */
export async function localInputs(paths: string[], shard: Shard | undefined): Promise<Inputs> {
  const out: Array<Item | BrokenInput> = [];
  const add = (path: string, size: number, modified: number) => {
    const name = basename(path);
    if (!inShard(name, shard)) return;
    out.push({
      name,
      key: path,
      label: path,
      version: `${size}-${Math.trunc(modified)}`,
      read(maxBytes) {
        if (size > maxBytes) return Promise.reject(tooLarge(path, size, maxBytes));
        return readInput(path);
      },
    });
  };
  for (const path of paths) {
    let found: Stats;
    try {
      found = await stat(path);
    } catch (err) {
      out.push({ key: path, error: new CliError(`${path}: ${fsReason(err)}`, 'invalid_input', path) });
      continue;
    }
    if (!found.isDirectory()) {
      add(path, found.size, found.mtimeMs);
      continue;
    }
    let names: string[];
    try {
      names = (await readdir(path)).sort();
    } catch (err) {
      out.push({ key: path, error: new CliError(`${path}: cannot read the directory: ${fsReason(err)}`, 'invalid_input', path) });
      continue;
    }
    const images = names.filter((name) => IMAGE_EXTENSIONS.has(extname(name).toLowerCase()));
    if (!images.length) out.push({ key: path, error: new CliError(`${path}: no image files in the directory`, 'invalid_input', path) });
    for (const name of images) {
      const file = join(path, name);
      try {
        const { size, mtimeMs } = await stat(file);
        add(file, size, mtimeMs);
      } catch (err) {
        out.push({ key: file, error: new CliError(`${file}: ${fsReason(err)}`, 'invalid_input', file) });
      }
    }
  }
  return {
    async *items() {
      yield* out;
    },
    count: async () => out.length,
  };
}

/** Every object under a bucket prefix that falls in the shard (folder placeholders and matte's own keys left out). */
export function bucketInputs(client: BucketClient, location: BucketLocation, shard: Shard | undefined): Inputs {
  async function* taken() {
    for await (const object of client.list(location)) {
      const name = object.key.slice(location.prefix.length);
      if (name === '' || name.endsWith('/') || name.startsWith(OWN_PREFIX) || !inShard(name, shard)) continue;
      yield { object, name };
    }
  }
  return {
    async *items() {
      for await (const { object, name } of taken()) {
        const url = `s3://${location.bucket}/${object.key}`;
        yield {
          name,
          key: object.key,
          label: url,
          version: object.etag,
          read: (maxBytes: number) => {
            if (object.size > maxBytes) return Promise.reject(tooLarge(url, object.size, maxBytes));
            return client.read(location.bucket, object.key, maxBytes, url);
          },
        };
      }
    },
    async count() {
      let n = 0;
      for await (const _ of taken()) n++;
      return n;
    },
  };
}

/** The inputs of every location given, one after another. */
export function concatInputs(all: Inputs[]): Inputs {
  return {
    async *items() {
      for (const inputs of all) yield* inputs.items();
    },
    async count() {
      let n = 0;
      for (const inputs of all) n += await inputs.count();
      return n;
    },
  };
}

/** The inputs of the command's arguments: local paths together (in the order given), each bucket prefix apart. */
export async function inputsOf(locations: Location[], shard: Shard | undefined, client: () => BucketClient): Promise<Inputs> {
  const parts: Inputs[] = [];
  let paths: string[] = [];
  for (const location of locations) {
    if (location.kind === 'path') {
      paths.push(location.path);
      continue;
    }
    if (paths.length) parts.push(await localInputs(paths, shard));
    paths = [];
    parts.push(bucketInputs(client(), location, shard));
  }
  if (paths.length) parts.push(await localInputs(paths, shard));
  return parts.length === 1 ? parts[0]! : concatInputs(parts);
}
