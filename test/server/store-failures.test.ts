// run-tests: parallel
// When the result store cannot write (docs/api.md, "Stored results"):
// a full file system answers 507 insufficient_storage, a read-only one 503 store_unavailable, never
// 500, no partial file is left, and /readyz is 503 while it lasts. Tested on a real 1 MiB tmpfs
// (mounted here; we run as root in CI), skipped with the reason when mounting is not permitted.
// Also: MATTE_RESULTS_MAX_BYTES over a shared directory, and the checks made on the directory.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { chmod, chown, mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfig } from '../../server/config.js';
import { DiskResultStore } from '../../server/store/index.js';
import { storeError } from '../../server/store/errors.js';
import { makePng } from '../helpers/images.js';
import { get, post, sleep, spawnServer, startTestServer, tempDir, TEST_KEY } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

// ~120 KB of PNG: more than a full tmpfs takes, far less than 1 MiB.
const noisy = makePng(200, 200, (x, y) => [(x * 7919 + y * 104729) % 251, (x * y * 31) % 253, (x ^ y) % 256]);
const edit = { input: noisy, operations: '[{"flip":"h"}]' };

let mnt = '';
let skipReason = '';

test.before(async () => {
  mnt = await tempDir('matte-tmpfs-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0700', 'tmpfs', mnt], { stdio: 'pipe' });
  } catch (err) {
    skipReason = `cannot mount a tmpfs here (${String((err as { stderr?: Buffer }).stderr ?? err).trim()}): the disk-full and read-only tests need root`;
  }
});
test.after(async () => {
  if (!skipReason) execFileSync('umount', [mnt]);
  await rm(mnt, { recursive: true, force: true });
});

/** /readyz's status once it is `expected` (the probe's answer is reused for a second), or the last one seen after 5 s. */
async function readyStatus(base: string, expected: number): Promise<number> {
  let status = 0;
  await waitFor(`/readyz to answer ${expected}`, async () => (status = (await get(base, '/readyz')).status) === expected, { timeoutMs: 5000, intervalMs: 100 }).catch(() => {});
  return status;
}

test('disk full (ENOSPC): 507 insufficient_storage, no partial file, /readyz 503 until there is room again', async () => {
  if (skipReason) return console.log(`skipped: ${skipReason}`);
  const dir = join(mnt, 'full');
  const server = await startTestServer({ MATTE_RESULTS_DIR: dir });
  try {
    assert.is((await post(server.url, '/images/edit', edit)).status, 200);
    assert.is(await readyStatus(server.url, 200), 200);
    // Fill the file system: the write stops at ENOSPC with the file holding what fitted.
    await writeFile(join(mnt, 'filler'), Buffer.alloc(2 * 1024 * 1024, 1)).catch((err) => assert.is(err.code, 'ENOSPC'));
    const r = await post(server.url, '/images/edit', edit);
    assert.is(r.status, 507, r.body.toString());
    assert.is(r.json().error.code, 'insufficient_storage');
    assert.ok(r.headers.get('retry-after'));
    assert.equal((await readdir(dir)).filter((f) => f.startsWith('.tmp-')), [], 'no partial file');
    assert.is((await post(server.url, '/images/edit', { ...edit, output: 'raw' })).status, 200, 'raw still works');
    const ready = await readyStatus(server.url, 503);
    assert.is(ready, 503, '/readyz: the probe writes real bytes');
    await rm(join(mnt, 'filler'));
    assert.is(await readyStatus(server.url, 200), 200);
    assert.is((await post(server.url, '/images/edit', edit)).status, 200);
  } finally {
    await server.close();
    await rm(join(mnt, 'filler'), { force: true });
  }
});

test('read-only file system (EROFS): 503 store_unavailable, /readyz 503, downloads still work', async () => {
  if (skipReason) return console.log(`skipped: ${skipReason}`);
  const dir = join(mnt, 'ro');
  const server = await startTestServer({ MATTE_RESULTS_DIR: dir });
  try {
    const stored = await post(server.url, '/images/edit', edit);
    assert.is(stored.status, 200);
    execFileSync('mount', ['-o', 'remount,ro', mnt]);
    try {
      const r = await post(server.url, '/images/edit', edit);
      assert.is(r.status, 503, r.body.toString());
      assert.is(r.json().error.code, 'store_unavailable');
      assert.is(await readyStatus(server.url, 503), 503);
      assert.is((await get(stored.json().url, '')).status, 200, 'stored results are still served');
    } finally {
      execFileSync('mount', ['-o', 'remount,rw', mnt]);
    }
    assert.is(await readyStatus(server.url, 200), 200);
    assert.equal((await readdir(dir)).filter((f) => f.startsWith('.tmp-')), []);
  } finally {
    await server.close();
  }
});

test('MATTE_RESULTS_MAX_BYTES: 507 beyond it, counting what other processes stored in the directory', async () => {
  const dir = await tempDir('matte-quota-');
  const server = await startTestServer({ MATTE_RESULTS_DIR: dir, MATTE_RESULTS_MAX_BYTES: '400000' });
  try {
    const size = (await post(server.url, '/images/edit', { ...edit, output: 'raw' })).body.length;
    assert.is((await post(server.url, '/images/edit', edit)).status, 200);
    // Another process (a store on the same directory) fills most of the rest.
    const other = new DiskResultStore({ dir, ttlSeconds: 60, sweepIntervalMs: 0 });
    await other.open();
    await other.put(Buffer.alloc(400_000 - 2 * size + 1), { ext: 'png', mediaType: 'image/png' });
    await sleep(5200); // the count is at most 5 s old
    const r = await post(server.url, '/images/edit', edit);
    assert.is(r.status, 507, r.body.toString());
    assert.is(r.json().error.code, 'insufficient_storage');
    assert.match(r.json().error.message, /MATTE_RESULTS_MAX_BYTES/);
    assert.is((await post(server.url, '/images/edit', { ...edit, output: 'raw' })).status, 200);
    assert.is((await get(server.url, '/readyz')).status, 200, 'a full quota is not unreadiness: raw output still works');
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('the results directory is refused when it is a symlink, owned by another user, or open to group or others (0755, 0770, 1777)', async () => {
  const base = await tempDir('matte-dirs-');
  const real = join(base, 'real');
  await mkdir(real, { mode: 0o700 });
  const cases: Array<[string, () => Promise<void>, RegExp]> = [
    [join(base, 'link'), () => symlink(real, join(base, 'link')), /symbolic link/],
    [join(base, 'open'), async () => { await mkdir(join(base, 'open')); await chmod(join(base, 'open'), 0o1777); }, /open to group or other users \(mode 1777.*chmod 700/],
    [join(base, 'readable'), async () => { await mkdir(join(base, 'readable')); await chmod(join(base, 'readable'), 0o755); }, /open to group or other users \(mode 755.*chmod 700/],
    [join(base, 'group'), async () => { await mkdir(join(base, 'group')); await chmod(join(base, 'group'), 0o770); }, /open to group or other users \(mode 770.*chmod 700/],
  ];
  if (process.getuid?.() === 0) cases.push([join(base, 'theirs'), async () => { await mkdir(join(base, 'theirs'), { mode: 0o700 }); await chown(join(base, 'theirs'), 65534, 65534); }, /owned by uid 65534/]);
  for (const [dir, make, why] of cases) {
    await make();
    let message = '';
    await startTestServer({ MATTE_RESULTS_DIR: dir }).then(
      (s) => s.close(),
      (err: Error) => (message = err.message),
    );
    assert.match(message, /^MATTE_RESULTS_DIR=/, message);
    assert.match(message, why);
  }
  // The process stops its start with the same message.
  let output = '';
  await spawnServer({ MATTE_API_KEYS: TEST_KEY, MATTE_RESULTS_DIR: join(base, 'link') }).then(
    (s) => s.stop('SIGKILL'),
    (err: Error) => (output = err.message),
  );
  assert.match(output, /cannot start: MATTE_RESULTS_DIR=.*symbolic link/);
  await rm(base, { recursive: true, force: true });
});

test('the default results directory is in the user\'s own state directory, not a shared temporary one', () => {
  assert.is(loadConfig({ MATTE_API_KEYS: 'k', XDG_STATE_HOME: '/srv/state' }).resultsDir, '/srv/state/matte/results');
  assert.is(loadConfig({ MATTE_API_KEYS: 'k', HOME: '/home/ann' }).resultsDir, '/home/ann/.local/state/matte/results');
});

test('store errors: no room is 507, anything else 503 (errno mapping)', () => {
  const errno = (code: string) => Object.assign(new Error(code), { code });
  for (const code of ['ENOSPC', 'EDQUOT', 'EFBIG']) assert.equal([storeError(errno(code)).status, storeError(errno(code)).code], [507, 'insufficient_storage'], code);
  for (const code of ['EACCES', 'EPERM', 'EROFS', 'EIO', 'ENOENT']) assert.equal([storeError(errno(code)).status, storeError(errno(code)).code], [503, 'store_unavailable'], code);
  assert.is(storeError(new Error('no code')).status, 503);
});

test.run();
