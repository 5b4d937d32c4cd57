// Runs the refinement's parameter search (bench/quality/data/refine-tune, built by build.sh from
// refine-tune.cc) with the model's entry read from models/registry.json, so the native tool holds
// no copy of the registry: input size, normalisation, output name and post-process are passed as
// arguments, the model file is the one lib/models.ts would load (MATTE_MODELS_DIR honoured).
//
//   node dist/bench/quality/tune/refine-tune.js MODEL SPLIT [--verbose] ['' 'key=v,key=v' ...]
//   node dist/bench/quality/tune/refine-tune.js MODEL --time=IMAGE
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { modelPath, modelRegistry, type ModelEntry } from '../../../lib/models.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const tool = join(root, 'bench', 'quality', 'data', 'refine-tune');

/** The registry entry as refine-tune.cc's arguments. */
export function entryArguments(name: string, entry: ModelEntry, path = modelPath(name)): string[] {
  const { input, output } = entry;
  return [
    `--model-path=${path}`,
    `--input=${input.width}x${input.height}`,
    `--divide=${input.divide === 'max' ? 0 : input.divide}`,
    `--mean=${input.mean.join(',')}`,
    `--std=${input.std.join(',')}`,
    `--output=${output.name}`,
    `--postprocess=${output.postprocess}`,
  ];
}

async function main(): Promise<number> {
  const [name, ...rest] = process.argv.slice(2);
  if (!name || rest.length === 0) {
    console.error("usage: node dist/bench/quality/tune/refine-tune.js MODEL SPLIT|--time=IMAGE [--verbose] ['' 'key=v,...' ...]");
    return 2;
  }
  const registry = await modelRegistry();
  const entry = registry.models[name];
  if (!entry) {
    console.error(`unknown model "${name}" (registry: ${Object.keys(registry.models).join(', ')})`);
    return 2;
  }
  if (!existsSync(tool)) {
    console.error(`no ${tool}: run \`sh bench/quality/tune/build.sh\` first`);
    return 2;
  }
  const run = spawnSync(tool, [...entryArguments(name, entry), name, ...rest], { cwd: root, stdio: 'inherit' });
  if (run.error) throw run.error;
  return run.status ?? 1;
}

process.exitCode = await main();
