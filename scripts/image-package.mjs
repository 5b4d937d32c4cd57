// The package.json of the container image's application (the Dockerfile's install stage): matte and
// its platform packages from the tarballs of `npm run pack` (file: dependencies, the platform
// packages optional, as test/install/install.test.ts installs them: npm keeps the one for the
// `--cpu` it is given), and the AWS SDK at the versions the repository tests with, so
// MATTE_RESULTS_STORE=s3 works in the image. `config.cpu` is that npm architecture.
// Usage: node scripts/image-package.mjs PACK_DIR amd64|arm64 > package.json
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [packDir, targetArch = 'amd64'] = process.argv.slice(2);
const cpu = { amd64: 'x64', arm64: 'arm64' }[targetArch];
if (!packDir || !cpu) {
  console.error('usage: node scripts/image-package.mjs PACK_DIR amd64|arm64');
  process.exit(2);
}
const manifest = JSON.parse(readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8'));
const { version } = manifest;
const tarballs = readdirSync(packDir);
const tarball = (name) => {
  if (!tarballs.includes(name)) throw new Error(`${name} is not in ${packDir} (${tarballs.join(' ')})`);
  return `file:${join(packDir, name)}`;
};
tarball(`matte-linux-${cpu}-gnu-${version}.tgz`); // the image's own platform package must be there
const sdk = ['@aws-sdk/client-s3', '@aws-sdk/s3-request-presigner'];
const app = {
  name: 'matte-image',
  version,
  private: true,
  description: 'matte as the container image runs it',
  config: { cpu },
  dependencies: {
    matte: tarball(`matte-${version}.tgz`),
    ...Object.fromEntries(sdk.map((name) => [name, manifest.devDependencies[name]])),
  },
  optionalDependencies: Object.fromEntries(
    tarballs.filter((name) => /^matte-linux-.+\.tgz$/.test(name)).map((name) => [`@matte/${name.slice('matte-'.length, -`-${version}.tgz`.length)}`, tarball(name)]),
  ),
};
process.stdout.write(`${JSON.stringify(app, null, 2)}\n`);
