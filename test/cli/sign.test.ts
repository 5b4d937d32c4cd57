// run-tests: parallel
// `matte sign` in a child process: the URL it prints is the library's signUrl() for the same
// options, verifies under the key, and decodes to the options given; mistakes are one line.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { signUrl } from '../../lib/index.js';
import { verifySignature } from '../../lib/signed-url.js';
import { lines, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';

const KEY = 'cli-signing-key-0123456789abcdef0123456789';
const env = { MATTE_URL_SIGNING_KEYS: `${KEY},older-key-0123456789abcdef0123456789` };

test('an edit: the URL signUrl makes, under the first key', async () => {
  const run = await runCli(['sign', 'https://shop.example/p/1.jpg', '--op', '{"removeBackground":true}', '--op', '{"resize":{"width":800}}', '-f', 'webp', '--base', 'https://img.example.com'], { env });
  assert.is(run.code, 0, run.stderr);
  const url = lines(run.stdout)[0]!;
  assert.is(url, signUrl({ input: 'https://shop.example/p/1.jpg', operations: [{ removeBackground: true }, { resize: { width: 800 } }] }, { key: KEY, format: 'webp', base: 'https://img.example.com' }));
  const [, , , , , signature, rest] = url.split('/');
  assert.ok(verifySignature([KEY], signature!, `/${rest}`));
});

test('-f auto: the URL whose format each browser\'s Accept header takes', async () => {
  const op = '{"resize":{"width":400,"height":300,"fit":"cover","gravity":"subject","dpr":2}}';
  const run = await runCli(['sign', 'https://shop.example/p/1.jpg', '--op', op, '-f', 'auto'], { env });
  assert.is(run.code, 0, run.stderr);
  const url = lines(run.stdout)[0]!;
  assert.ok(url.endsWith('.auto'));
  assert.is(url, signUrl({ input: 'https://shop.example/p/1.jpg', operations: [JSON.parse(op)] }, { key: KEY, format: 'auto' }));
});

test('a background removal from a key file, as JSON', async () => {
  const dir = await tempDir();
  await writeFile(join(dir, 'key'), `# the key\n${KEY}\n`);
  const run = await runCli(['sign', 'https://shop.example/p/1.jpg', '--trim', '--key-file', join(dir, 'key'), '--json'], { env: { MATTE_URL_SIGNING_KEYS: '' } });
  assert.is(run.code, 0, run.stderr);
  const { url } = JSON.parse(run.stdout) as { url: string };
  const options = JSON.parse(Buffer.from(url.split('/').at(-1)!.split('.')[0]!, 'base64url').toString());
  assert.equal(options, { input: 'https://shop.example/p/1.jpg', trim: true });
  assert.ok(url.endsWith('.png'));
});

test('mistakes: no key, an option of the other kind, a bad operation', async () => {
  const cases: Array<[string[], Record<string, string>, RegExp]> = [
    [['sign', 'https://a.example/x.jpg'], { MATTE_URL_SIGNING_KEYS: '' }, /no signing key/],
    [['sign', 'https://a.example/x.jpg', '--quality', '90'], env, /belong to an edit/],
    [['sign', 'https://a.example/x.jpg', '--op', '{"blur":999}'], env, /operations\[0\]\.blur/],
    [['sign', 'https://a.example/x.jpg', '-f', 'gif'], env, /png, webp/],
  ];
  for (const [args, extra, message] of cases) {
    const run = await runCli(args, { env: extra });
    assert.is(run.code, 1, args.join(' '));
    assert.is(lines(run.stderr).length, 1, run.stderr);
    assert.match(run.stderr, message);
  }
});

test.run();
