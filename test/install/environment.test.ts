// run-tests: parallel
// A bad environment gets one clear message naming what is missing and the command that fixes it,
// never a raw dynamic-loader error: no addon for the platform, no system libvips, a libvips older
// than 8.14. Each case is a real process loading the real library (MATTE_ADDON_PATH picks the
// addon file; the broken ones are copies of the real addon).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { scratchDir } from '../helpers/scratch.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const LIB = join(ROOT, 'dist/lib/index.js');

let scratch = '';
scratchDir(test, 'matte-environment-', (path) => (scratch = path));

/** Imports the library in a new process and returns the message of the error it fails with. */
async function importError(env: NodeJS.ProcessEnv): Promise<string> {
  const script = `import(${JSON.stringify(LIB)}).then(() => console.log('LOADED'), (e) => console.log('ERROR ' + e.message))`;
  const { stdout } = await run(process.execPath, ['-e', script], { env: { ...process.env, ...env } });
  return stdout.trim();
}

test('an addon path that does not exist: the message says how to get a build', async () => {
  const out = await importError({ MATTE_ADDON_PATH: join(scratch, 'nowhere/matte.node') });
  assert.match(out, /^ERROR matte: the native addon .*nowhere\/matte.node \(from MATTE_ADDON_PATH\) failed to load/);
});

test('no system libvips: the message names the package to install', async () => {
  // A copy of the real addon whose libvips dependencies name libraries no system has.
  const dir = join(scratch, 'novips');
  await run('mkdir', ['-p', dir]);
  await copyFile(join(ROOT, 'build/Release/matte.node'), join(dir, 'matte.node'));
  await copyFile(join(ROOT, 'build/Release/libmatte-onnxruntime.so.1'), join(dir, 'libmatte-onnxruntime.so.1'));
  await run('patchelf', ['--replace-needed', 'libvips-cpp.so.42', 'libvips-cpp.so.99', '--replace-needed', 'libvips.so.42', 'libvips.so.99', join(dir, 'matte.node')]);
  const out = await importError({ MATTE_ADDON_PATH: join(dir, 'matte.node') });
  assert.match(out, /^ERROR matte needs the system libvips \(>= 8\.14\) at run time, and none is installed\. Debian\/Ubuntu: sudo apt-get install --no-install-recommends libvips42$/);
});

test('a libvips older than 8.14: the addon refuses to start with a clear message', async () => {
  // vips_version() answering 8.13, interposed with LD_PRELOAD: the addon's own check runs for real.
  const source = join(scratch, 'old-vips.c');
  await writeFile(source, 'int vips_version(int flag) { return flag == 0 ? 8 : flag == 1 ? 13 : 0; }\n');
  await run('cc', ['-shared', '-fPIC', '-o', join(scratch, 'old-vips.so'), source]);
  // Appended to what is preloaded already: under `npm run test:asan` the ASan runtime must stay first.
  const preload = [process.env.LD_PRELOAD, join(scratch, 'old-vips.so')].filter(Boolean).join(' ');
  const out = await importError({ LD_PRELOAD: preload });
  assert.match(out, /^ERROR matte: libvips 8\.14 or newer is needed, and this system has 8\.13: install a newer libvips42/);
});

/**
 * Imports the library as an installed package would see it on a platform without a prebuilt package
 * and without a source build (a copy of dist/ with no build/ beside it), after `before` has run.
 */
async function importWithoutAddon(name: string, before = ''): Promise<string> {
  const pkg = join(scratch, name);
  await run('mkdir', ['-p', join(pkg, 'dist')]);
  await run('cp', ['-r', join(ROOT, 'dist/lib'), join(pkg, 'dist/lib')]);
  await run('cp', [join(ROOT, 'package.json'), pkg]);
  await run('ln', ['-s', join(ROOT, 'node_modules'), join(pkg, 'node_modules')]);
  const script = `${before}import(${JSON.stringify(join(pkg, 'dist/lib/index.js'))}).then(() => console.log('LOADED'), (e) => console.log('ERROR ' + e.message))`;
  const { stdout } = await run(process.execPath, ['-e', script], { env: { ...process.env, MATTE_ADDON_PATH: '' }, cwd: pkg });
  return stdout;
}

test('no addon at all for this platform: what to install or build, in one message', async () => {
  const stdout = await importWithoutAddon('pkg');
  assert.match(stdout, /^ERROR matte: no native addon for linux-x64-gnu\./);
  assert.match(stdout, /npm install matte --include=optional/);
  assert.match(stdout, /sudo apt-get install libvips-dev cmake g\+\+ make patchelf/);
});

test('32-bit ARM (no prebuilt package): the build-from-source message, not a loader error', async () => {
  // The installed library as a linux-arm-gnu process sees it: process.arch says arm before the
  // library is imported, and no addon is beside it (npm never installs an arm64 or x64 package there).
  const stdout = await importWithoutAddon('arm', "Object.defineProperty(process, 'arch', { value: 'arm' });\n");
  assert.match(stdout, /^ERROR matte: no native addon for linux-arm-gnu\.\nThere is no prebuilt package for linux-arm-gnu \(prebuilt: linux-x64-gnu, linux-arm64-gnu\); build it from source:/);
  assert.match(stdout, /sudo apt-get install libvips-dev cmake g\+\+ make patchelf/);
  assert.match(stdout, /npm rebuild matte/);
  assert.not.match(stdout, /cannot open shared object|wrong ELF class/);
});

test.run();
