// run-tests: parallel
// matte's version is one constant (lib/version.ts): it must be package.json's, and the library's
// versions() and the OpenAPI document must both report it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MATTE_VERSION, versions } from '../../lib/index.js';
import { openApiDocument } from '../../server/routes/openapi.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const packageVersion = (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version: string }).version;

test('MATTE_VERSION is package.json version', () => {
  assert.is(MATTE_VERSION, packageVersion);
  for (const sub of ['linux-x64-gnu', 'linux-arm64-gnu']) {
    const platform = JSON.parse(readFileSync(`${root}packages/${sub}/package.json`, 'utf8')) as { version: string };
    assert.is(platform.version, packageVersion, `packages/${sub}`);
  }
});

test('versions() and the OpenAPI document report it', () => {
  assert.is(versions().matte, packageVersion);
  const doc = openApiDocument({ publicUrl: 'http://127.0.0.1:1', maxInputBytes: 1024, resultTtlSeconds: 60 }) as { info: { version: string } };
  assert.is(doc.info.version, packageVersion);
});

test.run();
