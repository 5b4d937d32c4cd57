// `matte models list` and `matte models fetch NAME...`: the registry (models/registry.json) and
// the fetcher (models/fetch.ts) into modelsDir() (MATTE_MODELS_DIR, else the user's cache).
import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { COST_CLASSES } from '../lib/model-cost.js';
import { modelPath, modelRegistry, modelsDir, restrictedLicense } from '../lib/models.js';
import { formatBytes } from './files.js';

interface ModelRow {
  name: string;
  default: boolean;
  license: string;
  /** What the licence covers or requires, beyond its name (registry `licenseNote`). */
  licenseNote?: string;
  /** Why the licence restricts use; such a model is fetched only when named. */
  restriction?: string;
  /** Bytes of the file as published (null: the publisher does not say). */
  size: number | null;
  input: string;
  cost: string;
  expectedCost: string;
  /** Where the file is fetched from: the publisher's URL or the npm package. */
  source: string;
  origin?: string;
  fetched: boolean;
  bytes?: number;
  path: string;
  description?: string;
}

async function listModels(): Promise<ModelRow[]> {
  const registry = await modelRegistry();
  const dir = modelsDir();
  return Promise.all(
    Object.entries(registry.models).map(async ([name, entry]) => {
      const path = modelPath(name, dir);
      const size = await stat(path).then((s) => s.size, () => undefined);
      const cost = entry.cost ?? 'small';
      const restriction = restrictedLicense(entry.license);
      return {
        name,
        default: name === registry.default,
        license: entry.license,
        ...(entry.licenseNote ? { licenseNote: entry.licenseNote } : {}),
        ...(restriction ? { restriction } : {}),
        size: entry.size ?? null,
        input: `${entry.input.width}x${entry.input.height}`,
        cost,
        expectedCost: Object.hasOwn(COST_CLASSES, cost) ? COST_CLASSES[cost].expected : 'unknown cost class',
        source: [entry.source.npm && `npm ${entry.source.npm}`, entry.source.url].filter(Boolean).join(', or '),
        ...(entry.source.origin ? { origin: entry.source.origin } : {}),
        fetched: size !== undefined,
        ...(size !== undefined ? { bytes: size } : {}),
        path,
        description: entry.description,
      };
    }),
  );
}

export function modelsCommand(program: Command): void {
  const models = program.command('models').description('list the registry\'s models, fetch one ahead of use').helpCommand(false);

  models
    .command('list')
    .description(`list the models of the registry and whether each is fetched (into ${modelsDir()}; MATTE_MODELS_DIR sets it)`)
    .option('--json', 'print the list as JSON')
    .action(async (flags: { json?: boolean }) => {
      const rows = await listModels();
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ dir: modelsDir(), models: rows })}\n`);
        return;
      }
      const width = Math.max(...rows.map((r) => r.name.length));
      const licenceWidth = Math.max(...rows.map((r) => r.license.length));
      for (const row of rows) {
        const state = row.fetched ? `fetched, ${formatBytes(row.bytes ?? 0)}` : `not fetched: matte models fetch ${row.name}`;
        const size = row.size === null ? 'size not published' : formatBytes(row.size);
        const note = row.restriction ? `  (${row.restriction}: fetched only when named)` : '';
        process.stdout.write(
          `${row.name.padEnd(width)}  ${row.default ? 'default ' : '        '}${row.license.padEnd(licenceWidth)}  ${row.input.padEnd(9)}  ${row.cost.padEnd(6)}  ${size.padEnd(18)}  ${state}${note}\n` +
            (row.licenseNote ? `${' '.repeat(width + 2)}licence: ${row.licenseNote}\n` : '') +
            `${' '.repeat(width + 2)}from ${row.source}\n`,
        );
      }
      process.stdout.write(`cost classes: ${Object.entries(COST_CLASSES).map(([name, c]) => `${name} ${c.expected}, job budget x${c.timeoutScale}`).join('; ')}\n`);
      process.stdout.write(`directory: ${modelsDir()}\n`);
    });

  models
    .command('fetch')
    .description('fetch models into the models directory, checked by the publisher\'s checksum (default: the registry default)')
    .argument('[names...]', 'registry names, e.g. u2netp isnet-general-use birefnet-general')
    .option('--json', 'print the fetched paths as JSON')
    .action(async (names: string[], flags: { json?: boolean }) => {
      const named = names.length > 0;
      const wanted = named ? names : [(await modelRegistry()).default];
      // Loaded here, not with the program: the fetcher's HTTP client (undici) is a large part of a
      // process's start, which every other command would pay.
      const { fetchModel } = await import('../models/fetch.js');
      const fetched: Array<{ name: string; path: string }> = [];
      for (const name of wanted) fetched.push({ name, path: await fetchModel(name, { quiet: Boolean(flags.json), named }) });
      if (flags.json) process.stdout.write(`${JSON.stringify({ models: fetched })}\n`);
    });
}
