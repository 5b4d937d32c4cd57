// run-tests: parallel
// server/negotiate-format.ts and MATTE_AUTO_FORMATS: every Accept header the browsers send for an
// image today, and curl's, mapped to the format `auto` becomes on the GET routes. The same headers
// go through the real server in test/server/responsive.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { acceptedTypes, negotiateFormat } from '../../server/negotiate-format.js';
import { ConfigError, loadConfig } from '../../server/config.js';
import { ACCEPT_HEADERS } from '../helpers/accept-headers.js';

const both = ['avif', 'webp'] as const;

test('every browser and curl, with AVIF and WebP allowed', () => {
  assert.is(negotiateFormat(ACCEPT_HEADERS.chrome, both), 'avif');
  assert.is(negotiateFormat(ACCEPT_HEADERS.chromeTab, both), 'avif');
  assert.is(negotiateFormat(ACCEPT_HEADERS.firefox, both), 'avif');
  assert.is(negotiateFormat(ACCEPT_HEADERS.firefox115, both), 'avif');
  assert.is(negotiateFormat(ACCEPT_HEADERS.safari17, both), 'avif', 'AVIF first, whatever order the browser lists them in');
  assert.is(negotiateFormat(ACCEPT_HEADERS.safari15, both), 'webp');
  assert.is(negotiateFormat(ACCEPT_HEADERS.curl, both), 'auto', '*/* promises neither');
  assert.is(negotiateFormat(undefined, both), 'auto');
  assert.is(negotiateFormat('', both), 'auto');
  assert.is(negotiateFormat('image/*', both), 'auto');
});

test('only what the server allows', () => {
  assert.is(negotiateFormat(ACCEPT_HEADERS.chrome, ['webp']), 'webp');
  assert.is(negotiateFormat(ACCEPT_HEADERS.safari15, ['avif']), 'auto');
  assert.is(negotiateFormat(ACCEPT_HEADERS.chrome, []), 'auto');
});

test('q=0 refuses a type; case, spaces and other parameters do not matter', () => {
  assert.is(negotiateFormat('image/avif;q=0, image/webp', both), 'webp');
  assert.is(negotiateFormat('image/avif; q=0.0,image/webp;q=0', both), 'auto');
  assert.is(negotiateFormat(' Image/AVIF ; q=0.5 ', both), 'avif');
  assert.is(negotiateFormat('image/webp;level=1', both), 'webp');
  assert.is(negotiateFormat('image/avif;q=x', both), 'auto', 'a weight that is not a number accepts nothing');
  assert.equal([...acceptedTypes('a/b, ,c/d;q=0,e/f;q=1')], ['a/b', 'e/f']);
  assert.is(negotiateFormat(`${'x/y,'.repeat(1000)}image/avif`, both), 'auto', 'read up to 2048 characters');
});

test('MATTE_AUTO_FORMATS: default avif,webp, order fixed, none, and refusals naming it', () => {
  const base = { MATTE_API_KEYS: 'k' };
  assert.equal(loadConfig(base).autoFormats, ['avif', 'webp']);
  assert.equal(loadConfig({ ...base, MATTE_AUTO_FORMATS: 'webp' }).autoFormats, ['webp']);
  assert.equal(loadConfig({ ...base, MATTE_AUTO_FORMATS: ' WebP , avif ' }).autoFormats, ['avif', 'webp']);
  assert.equal(loadConfig({ ...base, MATTE_AUTO_FORMATS: 'none' }).autoFormats, []);
  for (const bad of ['jpeg', 'avif,gif', 'png']) {
    assert.throws(() => loadConfig({ ...base, MATTE_AUTO_FORMATS: bad }), (e: unknown) => e instanceof ConfigError && /MATTE_AUTO_FORMATS/.test((e as Error).message));
  }
});

test.run();
