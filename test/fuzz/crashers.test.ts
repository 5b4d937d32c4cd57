// run-tests: parallel
// Replays every case the fuzzer saved in test/fuzz/crashers/ (<id>.bin + <id>.json, see run.ts):
// each must now end in a result or a typed error, and leave no libvips object alive behind it.
// A case that still crashes takes this suite's process down, which the runner counts as a failure.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addon } from '../../lib/native.js';
import { caseFromJson, runCase } from './case.js';

const dir = fileURLToPath(new URL('../../../test/fuzz/crashers/', import.meta.url));
const counters = (addon as unknown as { counters: () => { objects: number } }).counters;

async function liveObjects(): Promise<number> {
  // Results are freed by their finalisers; let them run first.
  for (let i = 0; i < 3; i++) {
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((r) => setImmediate(r));
  }
  return counters().objects;
}

const names = readdirSync(dir).filter((n) => n.endsWith('.json')).sort();

test('the crashers directory holds saved cases', () => {
  assert.ok(names.length > 0);
});

for (const name of names) {
  const text = readFileSync(join(dir, name), 'utf8');
  const fuzzCase = caseFromJson(text, readFileSync(join(dir, name.replace(/\.json$/, '.bin'))));
  const found = (JSON.parse(text) as { found?: string }).found ?? '';
  test(`${name}: ${found}`, async () => {
    const before = await liveObjects();
    const outcome = await runCase(fuzzCase, 30_000);
    assert.is(outcome.problem, undefined, outcome.problem);
    assert.is(await liveObjects(), before, 'libvips objects left alive by the job');
  });
}

test.run();
