// run-tests: parallel
// The server as a process (node dist/server/main.js): results survive a restart, leftover
// temporary files (of a writer that died) are cleaned at start, SIGTERM lets an in-flight request finish, a generated
// key is printed once, and a bad setting stops the start with a clear message.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, rm, utimes, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { join } from 'node:path';
import { gradient } from '../helpers/images.js';
import { get, post, spawnServer, tempDir, TEST_KEY, waitForJobs } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const png = gradient(64, 48);
const SLOW = JSON.stringify([{ resize: { width: 3000, height: 3000, fit: 'cover' } }, { blur: 40 }]);
let dir: string;

test.before(async () => {
  dir = await tempDir('matte-lifecycle-');
});
test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('a stored result is still downloadable after a restart; leftover temp files are removed', async () => {
  const env = { MATTE_API_KEYS: TEST_KEY, MATTE_RESULTS_DIR: dir };
  const first = await spawnServer(env);
  let stored: { id: string; url: string };
  let bytes: Buffer;
  try {
    const r = await post(first.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]' });
    assert.is(r.status, 200);
    stored = r.json();
    bytes = (await get(stored.url, '')).body;
  } finally {
    assert.is(await first.stop('SIGTERM'), 0);
  }
  await writeFile(join(dir, '.tmp-left-by-a-crash'), 'half a file');
  const longAgo = (Date.now() - 3_600_000) / 1000; // older than any write takes: its writer died
  await utimes(join(dir, '.tmp-left-by-a-crash'), longAgo, longAgo);

  const second = await spawnServer(env);
  try {
    const port = new URL(second.url).port;
    const again = await get(`http://127.0.0.1:${port}`, new URL(stored.url).pathname);
    assert.is(again.status, 200);
    assert.ok(again.body.equals(bytes));
    const files = await readdir(dir);
    assert.not.ok(files.some((f) => f.startsWith('.tmp-')), files.join(' '));
  } finally {
    assert.is(await second.stop('SIGTERM'), 0);
  }
});

test('SIGTERM: the in-flight request finishes (its result written), new connections are refused, exit 0', async () => {
  const server = await spawnServer({ MATTE_API_KEYS: TEST_KEY, MATTE_RESULTS_DIR: dir, MATTE_CONCURRENCY: '1' });
  const inFlight = post(server.url, '/images/edit', { input: png, operations: SLOW, format: 'jpeg' });
  await waitForJobs(server.url, 1);
  server.child.kill('SIGTERM');
  const connectionRefused = () =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
      socket.on('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
  const refused = await waitFor('a new connection to be refused after SIGTERM', connectionRefused);
  const r = await inFlight;
  assert.is(r.status, 200, r.body.toString());
  const { id } = r.json();
  assert.ok(refused, 'a new connection after SIGTERM is refused');
  assert.is(await server.exited, 0);
  const files = await readdir(dir);
  assert.ok(files.some((f) => f.startsWith(`${id}.`) && f.endsWith('.jpeg')), files.join(' '));
});

test('no key configured: one is generated and printed once; it works (here with MATTE_CONCURRENCY=3, which re-runs with a larger thread pool)', async () => {
  const server = await spawnServer({ MATTE_RESULTS_DIR: dir, MATTE_CONCURRENCY: '3', MATTE_LOG_LEVEL: 'info' });
  try {
    // The key goes to stderr and the listening line to stdout: two pipes, either may arrive first.
    const key = (await waitFor('the generated key on stderr', () => /this run's API key is\s+(\S+)\s*\n/.exec(server.output())))[1];
    assert.ok(key && key.length >= 22, server.output());
    const ok = await post(server.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]', output: 'raw' }, { key });
    assert.is(ok.status, 200);
    const no = await post(server.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]', output: 'raw' }, { key: 'guess' });
    assert.is(no.status, 401);
    await waitFor('the access log line of the refused request', () => /"status":401/.test(server.output()));
    assert.is(server.output().split(key!).length - 1, 1, 'printed once, never logged');
    assert.match(server.output(), /"status":200/); // the access log line
  } finally {
    assert.is(await server.stop('SIGTERM'), 0);
  }
});

test('a bad setting stops the start with a message naming the variable', async () => {
  const cases: Array<[string, string]> = [['MATTE_CONCURRENCY', 'many'], ['MATTE_RESULT_TTL_SECONDS', '90000'], ['PORT', '70000'], ['MATTE_PUBLIC_URL', 'ftp://x'], ['MATTE_ALLOW_PRIVATE_URLS', 'perhaps']];
  for (const [name, value] of cases) {
    let message = '';
    await spawnServer({ [name]: value, MATTE_API_KEYS: TEST_KEY }).then(
      (s) => s.stop('SIGKILL'),
      (err: Error) => (message = err.message),
    );
    assert.match(message, new RegExp(`configuration error: ${name}`), message);
  }
});

test.run();
