// run-tests: parallel
// Installing matte as a user does: the tarballs of `npm run pack` (scripts/pack.mjs) into an empty
// project, with a PATH that has node and npm but no compiler, make or cmake. Nothing may be
// compiled; the default model is fetched the documented way into the user's cache directory
// (XDG_CACHE_HOME points into the scratch directory); then ESM and CommonJS scripts run edit()
// and removeBackground() from the installed package and the images they write are checked here.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { waitForArm64Setup } from '../helpers/arm64-setup.js';
import { decode, disc, pixel } from '../helpers/images.js';

const execFileAsync = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAX_INSTALLED_BYTES = 60e6;

let scratch = '';
let app = '';
let env: NodeJS.ProcessEnv = {};
let tarballs: string[] = [];

async function which(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const path = join(dir, name);
    if (existsSync(path)) return realpath(path);
  }
  return undefined;
}

function run(command: string, args: string[], cwd = app) {
  return execFileAsync(command, args, { cwd, env, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 }).catch((err) => {
    throw new Error(`${command} ${args.join(' ')} failed (${err.code ?? err.signal}):\n${err.stdout}\n${err.stderr}`);
  });
}

async function du(path: string): Promise<number> {
  const { stdout } = await execFileAsync('du', ['-sb', path]);
  return Number(stdout.split('\t')[0]);
}

// The installed package runs the packed addon (build/Release) in children with an environment of
// their own, never the ASan build: the ASan pass would only repeat the normal pass.
const skip = process.env.MATTE_SANITIZER_LOG_DIR ? 'the ASan pass would repeat the normal pass (the installed package runs the packed addon)' : undefined;
if (skip) console.log(`install test skipped: ${skip}`);
const check = skip ? test.skip : test;

test.before(async () => {
  if (skip) return;
  scratch = await mkdtemp(join(tmpdir(), 'matte-install-'));
  app = join(scratch, 'app');
  const bin = join(scratch, 'bin');
  await mkdir(app);
  await mkdir(bin);
  // The only programs on PATH: node and npm (and what npm and the model fetcher call: sh, tar, gzip).
  for (const name of ['node', 'npm', 'npx', 'sh', 'tar', 'gzip']) {
    const target = await which(name);
    if (!target) throw new Error(`${name} is not on PATH`);
    await symlink(target, join(bin, name));
  }
  env = { HOME: process.env.HOME, PATH: bin, XDG_CACHE_HOME: join(scratch, 'cache'), npm_config_update_notifier: 'false' };

  const pack = join(scratch, 'pack');
  waitForArm64Setup();
  await execFileAsync(process.execPath, [join(ROOT, 'scripts/pack.mjs'), '--out', pack, '--no-build'], { cwd: ROOT, timeout: 300_000 });
  tarballs = (await readdir(pack)).filter((f) => f.endsWith('.tgz')).map((f) => join(pack, f));
  // The platform packages as optional dependencies, from their tarballs: npm keeps the one whose
  // os/cpu/libc fit this machine and skips the others, as it does for matte's own list.
  const [main, ...platforms] = tarballs.sort((a, b) => a.length - b.length);
  const optionalDependencies = Object.fromEntries(platforms.map((t) => [`@matte/${t.split('/').pop()!.slice('matte-'.length, -'-0.1.0.tgz'.length)}`, `file:${t}`]));
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module', dependencies: { matte: `file:${main}` }, optionalDependencies }));
  await writeFile(join(app, 'subject.png'), disc(240, 180, 50, [30, 90, 220], [255, 255, 255], { alpha: false }));
});
test.after(() => (scratch ? rm(scratch, { recursive: true, force: true }) : undefined));

check('npm run pack writes the main package and the platform packages', () => {
  // The arm64 one when its cross build is there (scripts/setup-arm64.sh; test/install/arm64.test.ts).
  const names = tarballs.map((t) => t.split('/').pop()).filter((n) => n !== 'matte-linux-arm64-gnu-0.1.0.tgz');
  assert.equal(names.sort(), ['matte-0.1.0.tgz', 'matte-linux-x64-gnu-0.1.0.tgz']);
});

check('the scratch PATH has no compiler, make or cmake', async () => {
  for (const tool of ['cc', 'gcc', 'g++', 'c++', 'clang', 'make', 'cmake']) {
    const found = await run('sh', ['-c', `command -v ${tool} || echo none`]);
    assert.is(found.stdout.trim(), 'none', `${tool} is reachable`);
  }
});

check('npm install of the tarballs succeeds without compiling, within the size budget', async () => {
  const { stdout, stderr } = await run('npm', ['install', '--no-audit', '--no-fund', '--foreground-scripts']);
  assert.not.match(stdout + stderr, /building the native addon|gyp|cmake/i);
  assert.ok(existsSync(join(app, 'node_modules/@matte/linux-x64-gnu/matte.node')));
  assert.not.ok(existsSync(join(app, 'node_modules/@matte/linux-x64-gnu/matte_probes.node')), 'the probes build is not shipped');
  assert.not.ok(existsSync(join(app, 'node_modules/@matte/linux-arm64-gnu')), 'the arm64 package is left out');
  assert.not.ok(existsSync(join(app, 'node_modules/matte/build')), 'nothing was built');
  assert.not.ok(existsSync(join(app, 'node_modules/com.github.asus4.onnxruntime')), 'the 385 MB ONNX Runtime package is not installed');
  // The install script itself, run again explicitly (npm 11 may hold install scripts back): with
  // the prebuilt package present it has nothing to do.
  const again = await run('node', ['node_modules/matte/scripts/install.cjs']);
  assert.is(again.stdout + again.stderr, '');
  const matte = await du(join(app, 'node_modules/matte'));
  const platform = await du(join(app, 'node_modules/@matte/linux-x64-gnu'));
  const all = await du(join(app, 'node_modules'));
  console.log(`    installed: matte ${(matte / 1e6).toFixed(1)} MB + @matte/linux-x64-gnu ${(platform / 1e6).toFixed(1)} MB; node_modules in all ${(all / 1e6).toFixed(1)} MB`);
  assert.ok(matte + platform <= MAX_INSTALLED_BYTES, `matte and its platform package take ${matte + platform} bytes`);
});

check('the default model is fetched the documented way into the user cache directory', async () => {
  await run('npx', ['--no-install', 'matte', 'models', 'fetch', 'u2netp']);
  assert.ok(existsSync(join(scratch, 'cache/matte/models/u2netp.onnx')));
  const { stdout } = await run('npx', ['--no-install', 'matte', 'models', 'list']);
  assert.match(stdout, /u2netp/);
});

const SCRIPT = (load: string) => `${load}
const input = fs.readFileSync('subject.png');
(async () => {
  const edited = await matte.edit(input, [{ resize: { width: 120 } }, { flip: 'h' }], { format: 'png' });
  const cutout = await matte.removeBackground('subject.png', { trim: true });
  fs.writeFileSync(process.argv[2] + '-edit.png', edited.data);
  fs.writeFileSync(process.argv[2] + '-cutout.png', cutout.data);
  console.log(JSON.stringify({ edit: [edited.width, edited.height], cutout: [cutout.width, cutout.height], versions: matte.versions() }));
})().catch((err) => { console.error(err); process.exit(1); });
`;

async function checkOutputs(prefix: string, stdout: string) {
  const out = JSON.parse(stdout.trim().split('\n').pop()!);
  assert.equal(out.edit, [120, 90]);
  assert.match(out.versions.libvips, /^8\./);
  const edited = await decode(await readFile(join(app, `${prefix}-edit.png`)));
  assert.is(edited.width, 120);
  const [r, g, b] = pixel(edited, 60, 45);
  assert.ok(b > 180 && r < 80, `the disc's centre is blue: ${[r, g, b]}`);
  const cutout = await decode(await readFile(join(app, `${prefix}-cutout.png`)));
  assert.ok(cutout.hasAlpha);
  assert.ok(cutout.width < 200 && cutout.width >= 90, `trim crops to the disc: ${cutout.width}`);
  assert.ok(pixel(cutout, Math.floor(cutout.width / 2), Math.floor(cutout.height / 2))[3] > 200, 'the subject is opaque');
}

check('import from an ES module: edit() and removeBackground() give the right images', async () => {
  await writeFile(join(app, 'esm.mjs'), SCRIPT("import * as matte from 'matte';\nimport fs from 'node:fs';"));
  const { stdout, stderr } = await run('node', ['esm.mjs', 'esm']);
  assert.not.match(stderr, /GLib|CRITICAL|Warning/);
  await checkOutputs('esm', stdout);
});

check('require() from CommonJS works too', async () => {
  await writeFile(join(app, 'cjs.cjs'), SCRIPT("const matte = require('matte');\nconst fs = require('node:fs');"));
  const { stdout, stderr } = await run('node', ['cjs.cjs', 'cjs']);
  assert.not.match(stderr, /GLib|CRITICAL|Warning/);
  await checkOutputs('cjs', stdout);
});

check('the types resolve through exports for a TypeScript user', async () => {
  await writeFile(
    join(app, 'typed.ts'),
    "import { edit, type Result } from 'matte';\nexport const run = (b: Buffer): Promise<Result> => edit(b, [{ resize: { width: 10 } }]);\n",
  );
  await execFileAsync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', '--typeRoots', join(ROOT, 'node_modules/@types'), 'typed.ts'], { cwd: app }).catch((err) => {
    throw new Error(`tsc: ${err.stdout}${err.stderr}`);
  });
});

check('the installed server starts and serves the playground, the API reference and the API', async () => {
  // In its own process group: npx runs the server as its child, and both must stop at the end.
  const child = spawn('npx', ['--no-install', 'matte', 'serve'], {
    cwd: app,
    detached: true,
    env: { ...env, PORT: '0', MATTE_API_KEYS: 'install-key', MATTE_RESULTS_DIR: join(scratch, 'results'), MATTE_METRICS_ADDRESS: 'off' },
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let seen = '';
      const timer = setTimeout(() => reject(new Error(`no URL printed: ${seen}`)), 60_000);
      const read = (chunk: Buffer) => {
        seen += chunk;
        const found = seen.match(/https?:\/\/[\d.:[\]a-z]+:\d+/);
        if (found) {
          clearTimeout(timer);
          resolve(found[0]);
        }
      };
      child.stdout!.on('data', read);
      child.stderr!.on('data', read);
      child.on('exit', (code) => reject(new Error(`matte serve exited with ${code}: ${seen}`)));
    });
    for (const page of ['/', '/docs']) {
      const r = await fetch(url + page);
      assert.is(r.status, 200, page);
      assert.match(r.headers.get('content-type') ?? '', /text\/html/);
    }
    const body = new FormData();
    body.set('input', new Blob([await readFile(join(app, 'subject.png'))]), 'subject.png');
    body.set('operations', '[{"resize":{"width":60}}]');
    body.set('output', 'raw');
    const r = await fetch(`${url}/images/edit`, { method: 'POST', headers: { 'X-Api-Key': 'install-key' }, body });
    assert.is(r.status, 200);
    assert.is(r.headers.get('x-image-width'), '60');
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
  }
});

check('a missing model names the command that fetches it', async () => {
  await writeFile(join(app, 'nomodel.mjs'), "import { removeBackground } from 'matte';\nawait removeBackground('subject.png').catch((e) => { console.log(e.code + ': ' + e.message); });\n");
  const { stdout } = await execFileAsync('node', ['nomodel.mjs'], { cwd: app, env: { ...env, XDG_CACHE_HOME: join(scratch, 'empty-cache') } });
  assert.match(stdout, /model_error: .*npx matte models fetch u2netp/);
});

test.run();
