// run-tests: parallel
// matte never phones home: the official ONNX Runtime (1.29+) it links carries Microsoft's 1DS
// telemetry on Linux, which writes a device id and an event queue under ~/.cache/Microsoft, a
// `.ses` and a `mat-debug-<pid>.log` in the temporary directory, and uploads the events. A real
// process runs a real background removal with a fresh home and temporary directory, and neither
// may hold anything of ONNX Runtime's afterwards. (The opt-in path is not run: it would try to
// upload to the internet, and tests only talk to loopback.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { mkdir, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { modelsDir } from '../../lib/models-dir.js';
import { fixture } from '../helpers/fixtures.js';
import { scratchDir } from '../helpers/scratch.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const LIB = join(ROOT, 'dist/lib/index.js');

let scratch = '';
scratchDir(test, 'matte-telemetry-', (path) => (scratch = path));

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath ?? e.path, e.name))).sort();
}

test('a background removal leaves no ONNX Runtime telemetry files and sets the opt-out', async () => {
  const home = join(scratch, 'home');
  const temp = join(scratch, 'tmp');
  await mkdir(home, { recursive: true });
  await mkdir(temp, { recursive: true });
  const input = await fixture('lenna.png');
  const script = `
    const { readFileSync } = await import("node:fs");
    const { removeBackground } = await import(${JSON.stringify(LIB)});
    const out = await removeBackground(readFileSync(${JSON.stringify(input)}), { model: "u2netp" });
    console.log(JSON.stringify({ width: out.width, optOut: process.env.ORT_DISABLE_TELEMETRY }));`;
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, TMPDIR: temp, MATTE_MODELS_DIR: modelsDir() };
  delete env.ORT_DISABLE_TELEMETRY;
  delete env.XDG_CACHE_HOME;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { env });
  const result = JSON.parse(stdout.trim().split('\n').pop()!);
  assert.is(result.width, 512);
  assert.is(result.optOut, '1');
  assert.equal(await filesUnder(home), []);
  assert.equal(await filesUnder(temp), []);
});

test('a value the user chose is kept', async () => {
  const script = `await import(${JSON.stringify(LIB)}); console.log(process.env.ORT_DISABLE_TELEMETRY);`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, ORT_DISABLE_TELEMETRY: 'true' } });
  assert.is(stdout.trim(), 'true');
});

test.run();
