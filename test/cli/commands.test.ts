// run-tests: parallel
// The rest of the `matte` command as a real process: --help on every command, --version,
// unknown commands and options, `models list|fetch`, and `serve` answering on loopback.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { modelsDir } from '../../lib/models.js';
import { lines, MATTE_BIN, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';

const version = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')).version;

test('--version and --help on every command, exit 0', async () => {
  const v = await runCli(['--version']);
  assert.is(v.code, 0);
  assert.is(v.stdout.trim(), version);
  for (const args of [['--help'], ['edit', '--help'], ['remove-background', '--help'], ['serve', '--help'], ['models', '--help'], ['models', 'list', '--help'], ['models', 'fetch', '--help']]) {
    const run = await runCli(args);
    assert.is(run.code, 0, `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stdout, /^Usage: matte/, args.join(' '));
  }
  assert.match((await runCli(['edit', '--help'])).stdout, /--op <json>/);
  assert.match((await runCli(['serve', '--help'])).stdout, /MATTE_API_KEYS/);
});

test('no command, an unknown command or option: one line, exit 1', async () => {
  const none = await runCli([]);
  assert.is(none.code, 1);
  assert.match(none.stderr, /Usage: matte/);
  for (const [args, message] of [
    [['frobnicate'], "matte: unknown command 'frobnicate'"],
    [['--frob'], "matte: unknown option '--frob'"],
    [['models', 'frob'], "matte: unknown command 'frob'"],
    [['models', 'list', '--frob'], "matte: unknown option '--frob'"],
  ] as const) {
    const run = await runCli([...args]);
    assert.is(run.code, 1, args.join(' '));
    assert.equal(lines(run.stderr), [message]);
  }
});

test('models list shows the registry and what is fetched in MATTE_MODELS_DIR', async () => {
  const dir = await tempDir('matte-models-');
  await copyFile(join(modelsDir(), 'u2netp.onnx'), join(dir, 'u2netp.onnx'));
  const env = { MATTE_MODELS_DIR: dir };
  const run = await runCli(['models', 'list', '--json'], { env });
  assert.is(run.code, 0, run.stderr);
  const list = JSON.parse(run.stdout);
  assert.is(list.dir, dir);
  const byName = Object.fromEntries(list.models.map((m: { name: string }) => [m.name, m]));
  assert.is(byName.u2netp.fetched, true);
  assert.is(byName.u2netp.default, true);
  assert.is(byName.isnet.fetched, false);
  assert.is(byName.isnet.license, 'AGPL-3.0');
  const text = await runCli(['models', 'list'], { env });
  assert.match(text.stdout, /u2netp\s+default\s+Apache-2.0\s+320x320\s+small\s+4\.57 MB\s+fetched/);
  assert.match(text.stdout, /isnet .*not fetched: matte models fetch isnet/);
});

test('models fetch: an already fetched model is checked and kept; an unknown one is one line', async () => {
  const dir = await tempDir('matte-models-');
  await copyFile(join(modelsDir(), 'u2netp.onnx'), join(dir, 'u2netp.onnx'));
  const run = await runCli(['models', 'fetch', 'u2netp', '--json'], { env: { MATTE_MODELS_DIR: dir } });
  assert.is(run.code, 0, run.stderr);
  assert.equal(JSON.parse(run.stdout), { models: [{ name: 'u2netp', path: join(dir, 'u2netp.onnx') }] });
  const plain = await runCli(['models', 'fetch'], { env: { MATTE_MODELS_DIR: dir } });
  assert.is(plain.code, 0);
  assert.match(plain.stdout, /u2netp is already in/);
  const unknown = await runCli(['models', 'fetch', 'nosuch'], { env: { MATTE_MODELS_DIR: dir } });
  assert.is(unknown.code, 1);
  assert.is(lines(unknown.stderr).length, 1);
  assert.match(unknown.stderr, /^matte: unknown model "nosuch" \(registry: u2netp, isnet, u2net, .*birefnet-general, .*\)\n$/);
});

test('models fetch constructor|toString|__proto__ (inherited names): "unknown model", exit 1, never a TypeError', async () => {
  const dir = await tempDir('matte-models-');
  for (const name of ['constructor', 'toString', '__proto__']) {
    const run = await runCli(['models', 'fetch', name], { env: { MATTE_MODELS_DIR: dir } });
    assert.is(run.code, 1, name);
    assert.equal(lines(run.stderr).length, 1, run.stderr);
    assert.match(run.stderr, new RegExp(`^matte: unknown model "${name}" \\(registry: u2netp, `), name);
    assert.not.match(run.stderr, /TypeError|Cannot read properties/);
  }
  assert.equal(await readdir(dir), [], 'nothing written');
});

test('models list says the licence facts plainly: silueta none stated, isnet-general-use code only, bria-rmbg non-commercial', async () => {
  const run = await runCli(['models', 'list']);
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stdout, /silueta\s+none stated .*no licence stated/);
  assert.match(run.stdout, /licence: its publisher states no licence for these weights/);
  assert.match(run.stdout, /licence: Apache-2\.0 is the licence of DIS's code; the weights carry no licence of their own/);
  assert.match(run.stdout, /bria-rmbg .*CC-BY-NC-4\.0.*non-commercial use only/);
  assert.match(run.stdout, /isnet .*AGPL-3\.0/);
  const json = JSON.parse((await runCli(['models', 'list', '--json'])).stdout);
  const general = json.models.find((m: { name: string }) => m.name === 'isnet-general-use');
  assert.match(general.licenseNote, /weights carry no licence of their own/);
});

test('serve starts the server from the environment, serves the pages, stops on SIGTERM', async () => {
  const results = await tempDir('matte-results-');
  await mkdir(results, { recursive: true });
  const child = spawn(process.execPath, [MATTE_BIN, 'serve'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', MATTE_API_KEYS: 'k-0123456789abcdef', MATTE_RESULTS_DIR: results, MATTE_LOG_LEVEL: 'warn', MATTE_METRICS_ADDRESS: 'off' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 60_000);
    child.stdout.on('data', () => {
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
  });
  try {
    const health = await fetch(`${url}/healthz`);
    assert.is(health.status, 200);
    const page = await fetch(`${url}/`);
    assert.is(page.status, 200);
    assert.match(await page.text(), /matte playground/);
  } finally {
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.is(await exited, 0, out);
  }
});

test.run();
