// matte's `npm install` step. Nothing is compiled when this platform's prebuilt package
// (@matte/<platform>, an optional dependency) or an earlier source build is there. Otherwise, in a
// git checkout (no dist/ yet) or with cmake-js installed, the addon is built from source against
// the system libvips; failing both, one message says what to install (and the library repeats it
// when it is loaded), without failing the whole `npm install`.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { spawnSync } = require('node:child_process');
const { pathToFileURL } = require('node:url');

const root = join(__dirname, '..');

function cmakeJs() {
  try {
    return require.resolve('cmake-js/bin/cmake-js', { paths: [root] });
  } catch {
    return undefined;
  }
}

function build(cli) {
  console.log('matte: building the native addon from source (cmake-js, system libvips)');
  const result = spawnSync(process.execPath, [cli, 'compile', '--out', 'build', '--log-level', 'error'], { cwd: root, stdio: 'inherit' });
  process.exit(result.status ?? 1);
}

async function main() {
  const platform = join(root, 'dist', 'lib', 'platform.js');
  const cli = cmakeJs();
  if (!existsSync(platform)) {
    // A git checkout: the developer's tools (devDependencies) are here to build with.
    if (!cli) throw new Error('cmake-js is missing: run npm install in the checkout');
    return build(cli);
  }
  const { addonCandidates, missingAddonMessage } = await import(pathToFileURL(platform).href);
  if (addonCandidates().length) return;
  if (cli && existsSync(join(root, 'native'))) return build(cli);
  console.warn(missingAddonMessage());
}

main().catch((err) => {
  console.error(`matte: ${err.message}`);
  process.exit(1);
});
