// run-tests: parallel
// server/config.ts: defaults, validation with messages naming the variable, and the README table.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '../../server/config.js';
import { BUCKET_VARIABLES } from '../../cli/bucket.js';
import { SHARD_VARIABLES } from '../../cli/shard.js';

const base = { MATTE_API_KEYS: 'k' };

test('defaults', () => {
  const c = loadConfig(base, 2);
  assert.is(c.port, 8080);
  assert.is(c.host, '127.0.0.1');
  assert.is(c.publicUrl, 'http://127.0.0.1:8080');
  assert.is(c.resultTtlSeconds, 86400);
  assert.is(c.maxInputBytes, 25 * 1024 * 1024);
  assert.is(c.maxInputPixels, 100_000_000);
  assert.is(c.maxAnimationFrames, 1000);
  assert.is(c.maxMatteFrames, 100);
  assert.is(c.concurrency, 2);
  assert.is(c.queueLimit, 8);
  assert.is(c.jobThreads, undefined, 'a lone job may use every core');
  assert.is(c.allowPrivateUrls, false);
  assert.is(c.urlFetchTimeoutMs, 10_000);
  assert.is(c.removebgApi, true, 'the remove.bg-compatible routes are on');
  assert.is(loadConfig({ ...base, MATTE_REMOVEBG_API: 'off' }).removebgApi, false);
});

test('values are read and the public URL follows HOST and PORT unless given', () => {
  const c = loadConfig({ ...base, PORT: '9000', HOST: '0.0.0.0', MATTE_CONCURRENCY: '3', MATTE_ALLOW_PRIVATE_URLS: '1' }, 8);
  assert.is(c.publicUrl, 'http://localhost:9000');
  assert.is(c.queueLimit, 12);
  assert.is(c.allowPrivateUrls, true);
  assert.is(loadConfig({ ...base, MATTE_JOB_THREADS: '1' }, 8).jobThreads, 1);
  assert.is(loadConfig({ ...base, HOST: '::1' }).publicUrl, 'http://[::1]:8080');
  assert.is(loadConfig({ ...base, MATTE_PUBLIC_URL: 'https://img.example.com/matte/' }).publicUrl, 'https://img.example.com/matte');
});

test('bad values throw ConfigError naming the variable', () => {
  const bad: Array<[string, string]> = [
    ['PORT', '-1'],
    ['PORT', '65536'],
    ['MATTE_RESULT_TTL_SECONDS', '86401'],
    ['MATTE_RESULT_TTL_SECONDS', '0'],
    ['MATTE_CONCURRENCY', '0'],
    ['MATTE_JOB_THREADS', '0'],
    ['MATTE_JOB_THREADS', 'two'],
    ['MATTE_CONCURRENCY', '1.5'],
    ['MATTE_MAX_INPUT_BYTES', '25MB'],
    ['MATTE_PUBLIC_URL', 'not a url'],
    ['MATTE_PUBLIC_URL', 'ftp://x'],
    ['MATTE_ALLOW_PRIVATE_URLS', 'maybe'],
    ['MATTE_REMOVEBG_API', 'maybe'],
    ['MATTE_LOG_LEVEL', 'loud'],
    ['MATTE_API_KEYS', 'has space'],
  ];
  for (const [name, value] of bad) {
    assert.throws(() => loadConfig({ ...base, [name]: value }), (e: Error) => e instanceof ConfigError && (e.message.includes(name) || name === 'MATTE_API_KEYS'), `${name}=${value}`);
  }
});

test('the configuration table (docs/configuration.md) has one row for every variable, the server\'s and the command\'s', () => {
  const section = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
  const rows = [...section.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]);
  assert.equal([...rows].sort(), [...CONFIG_VARIABLES, ...BUCKET_VARIABLES, ...SHARD_VARIABLES].sort());
});

test.run();
