// `npm run pack`: writes into pack/ every tarball a user installs (sharp's and esbuild's layout):
//   matte-<version>.tgz                 the library, server and CLI (JavaScript, types, the native
//                                       sources for a build on other platforms); its
//                                       optionalDependencies name the platform packages
//   matte-linux-x64-gnu-<version>.tgz   @matte/linux-x64-gnu: the N-API 8 addon and ONNX Runtime
//   matte-linux-arm64-gnu-<version>.tgz @matte/linux-arm64-gnu: the same, cross-compiled for arm64
// The addons are built first (cmake-js, incremental: the arm64 one by scripts/setup-arm64.sh, which
// installs the cross compiler and the arm64 sysroot when missing) and the TypeScript compiled.
// Nothing is published; `npm publish pack/*.tgz` would, in that order: platform packages first.
// Usage: node scripts/pack.mjs [--out DIR] [--no-build]
//   --no-build packs what is built already; the arm64 package only when build-arm64 holds an addon.
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outIndex = process.argv.indexOf('--out');
const out = outIndex > 0 ? process.argv[outIndex + 1] : join(root, 'pack');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const { version } = manifest;
// Every platform package: where its build is and the strip that reads its binaries.
const PLATFORMS = [
  { id: 'linux-x64-gnu', build: 'build', strip: 'strip' },
  { id: 'linux-arm64-gnu', build: 'build-arm64', strip: 'aarch64-linux-gnu-strip' },
];

const run = (command, args, cwd = root) => execFileSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'] }).toString();
const say = (text) => console.log(`pack: ${text}`);

if (`${process.platform}-${process.arch}` !== 'linux-x64') {
  console.error(`pack: the prebuilt packages are built on linux-x64; this is ${process.platform}-${process.arch}`);
  process.exit(1);
}

if (process.argv.includes('--no-build')) {
  // The caller (the install test, after the set-up) built both already.
  for (const file of ['build/Release/matte.node', 'dist/lib/index.js'])
    if (!existsSync(join(root, file))) throw new Error(`pack --no-build: ${file} is missing; run npm run build`);
} else {
  say('building the addons and the TypeScript');
  run(process.execPath, [join(root, 'node_modules/cmake-js/bin/cmake-js'), 'compile', '--out', 'build', '--log-level', 'error']);
  execFileSync('sh', [join(root, 'scripts/setup-arm64.sh')], { cwd: root, stdio: 'inherit' });
  run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json']);
}
const built = PLATFORMS.filter(({ id, build }) => {
  if (existsSync(join(root, build, 'Release/matte.node'))) return true;
  say(`no ${build}/Release/matte.node: @matte/${id} is not packed (sh scripts/setup-arm64.sh builds it)`);
  return false;
});

mkdirSync(out, { recursive: true });
const stage = mkdtempSync(join(tmpdir(), 'matte-pack-'));

function npmPack(dir) {
  const [info] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', out], dir));
  say(`${info.filename}: ${(info.size / 1e6).toFixed(1)} MB packed, ${(info.unpackedSize / 1e6).toFixed(1)} MB unpacked, ${info.entryCount} files`);
  return info;
}

/** A platform package: its package.json and README from packages/, the binaries from its build. */
function packPlatform({ id, build, strip }) {
  const platformDir = join(stage, id);
  cpSync(join(root, 'packages', id), platformDir, { recursive: true });
  const platformManifest = JSON.parse(readFileSync(join(platformDir, 'package.json'), 'utf8'));
  platformManifest.version = version;
  writeFileSync(join(platformDir, 'package.json'), `${JSON.stringify(platformManifest, null, 2)}\n`);
  copyFileSync(join(root, build, 'Release/matte.node'), join(platformDir, 'matte.node'));
  // Debug symbols are not shipped (the source build keeps them).
  run(strip, ['--strip-unneeded', join(platformDir, 'matte.node')]);
  copyFileSync(join(root, build, 'Release/libmatte-onnxruntime.so.1'), join(platformDir, 'libmatte-onnxruntime.so.1'));
  // Both libraries are Microsoft's ONNX Runtime builds, under the same licence and notices.
  const ort = join(root, 'node_modules/com.github.asus4.onnxruntime');
  copyFileSync(join(ort, 'LICENSE'), join(platformDir, 'LICENSE-onnxruntime'));
  copyFileSync(join(ort, 'ThirdPartyNotices.txt'), join(platformDir, 'ThirdPartyNotices-onnxruntime.txt'));
  return { name: platformManifest.name, info: npmPack(platformDir) };
}

try {
  const platforms = built.map(packPlatform);

  // The main package: what `files` lists, with a package.json for users: the platform packages
  // as optional dependencies and only the install script (the others are for the repository).
  const mainDir = join(stage, 'matte');
  // Each `files` entry is copied from its literal head (dist/lib/**/*.js -> dist/lib); npm pack then
  // applies the globs themselves.
  for (const pattern of manifest.files) {
    const entry = pattern.split(/\/?\*/)[0];
    const from = join(root, entry);
    if (!existsSync(from)) continue;
    mkdirSync(dirname(join(mainDir, entry)), { recursive: true });
    cpSync(from, join(mainDir, entry), { recursive: true });
  }
  for (const file of ['README.md', 'LICENSE']) if (existsSync(join(root, file))) copyFileSync(join(root, file), join(mainDir, file));
  const published = { ...manifest };
  delete published.private;
  published.scripts = { install: manifest.scripts.install };
  published.optionalDependencies = Object.fromEntries(PLATFORMS.map(({ id }) => [`@matte/${id}`, version]));
  writeFileSync(join(mainDir, 'package.json'), `${JSON.stringify(published, null, 2)}\n`);
  const mainInfo = npmPack(mainDir);

  const infos = [mainInfo, ...platforms.map(({ info }) => info)];
  const sizes = Object.fromEntries(infos.map((info) => [info.filename, { packed: info.size, unpacked: info.unpackedSize }]));
  writeFileSync(join(out, 'sizes.json'), `${JSON.stringify(sizes, null, 2)}\n`);
  say(`written to ${out}: ${infos.map((info) => info.filename).join(' ')}`);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
