// run-tests: parallel
// Several server processes on one MATTE_RESULTS_DIR (docs/api.md, "Stored results"): the directory is
// the truth. Three real processes: results put by one are downloaded from the others at once;
// sweeps (the processes' own and three more run here at once) race downloads without losing an
// unexpired result; a process SIGKILLed while writing a large result leaves no partial result, and
// its temporary file is removed by a later sweep.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { watch } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DiskResultStore } from '../../server/store/index.js';
import { gradient, isPng, makePng } from '../helpers/images.js';
import { get, post, sleep, spawnServer, tempDir, TEST_KEY, type ChildServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const TTL_SECONDS = 3;
const png = gradient(40, 30);
let dir: string;
let servers: ChildServer[] = [];

test.before(async () => {
  dir = await tempDir('matte-shared-');
  const env = { MATTE_API_KEYS: TEST_KEY, MATTE_RESULTS_DIR: dir, MATTE_RESULT_TTL_SECONDS: String(TTL_SECONDS), MATTE_CONCURRENCY: '1' };
  servers = await Promise.all([spawnServer(env), spawnServer(env), spawnServer(env)]);
});
test.after(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGTERM')));
  await rm(dir, { recursive: true, force: true });
});

/** The download path of a result, asked of another server. */
const pathOf = (url: string) => new URL(url).pathname;

test('a result put by any process is downloadable from every other at once, with the same headers, HEAD and Range', async () => {
  const raw = (await post(servers[0]!.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]', output: 'raw' })).body;
  for (const [i, putter] of servers.entries()) {
    const r = await post(putter.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]' });
    assert.is(r.status, 200);
    const { id, url } = r.json() as { id: string; url: string };
    for (const [j, other] of servers.entries()) {
      if (i === j) continue;
      const d = await get(other.url, pathOf(url));
      assert.is(d.status, 200, `put on ${i}, read on ${j}`);
      assert.ok(d.body.equals(raw));
      assert.is(d.headers.get('etag'), `"${id}"`);
      assert.is(d.headers.get('content-type'), 'image/png');
      const h = await get(other.url, pathOf(url), { method: 'HEAD' });
      assert.is(h.headers.get('content-length'), String(raw.length));
      const part = await get(other.url, pathOf(url), { headers: { Range: 'bytes=0-7' } });
      assert.is(part.status, 206);
      assert.ok(part.body.equals(raw.subarray(0, 8)));
    }
  }
});

test('sweeps racing downloads: every result is served until it expires and 404 after, never a 5xx; expired files are swept', async () => {
  const stored: Array<{ url: string; bytes: Buffer; expiresNoEarlierThan: number }> = [];
  const sweepers = [0, 1, 2].map(() => new DiskResultStore({ dir, ttlSeconds: TTL_SECONDS, sweepIntervalMs: 0 }));
  let sweeping = true;
  let sweeps = 0;
  const sweepLoop = (async () => {
    while (sweeping) {
      await Promise.all(sweepers.map((s) => s.sweep())); // three sweepers at once, plus each process's own
      sweeps++;
      await sleep(20);
    }
  })();
  const until = Date.now() + 5000;
  let round = 0;
  let checks = 0;
  while (Date.now() < until) {
    // Put one result a round, on the processes in turn, with a different image each time.
    const before = Date.now();
    const input = makePng(16 + (round % 7), 16, (x, y) => [(x * 13 + round) % 256, (y * 7) % 256, round % 256]);
    const r = await post(servers[round % 3]!.url, '/images/edit', { input, operations: '[{"flip":"v"}]' });
    assert.is(r.status, 200);
    const raw = (await post(servers[round % 3]!.url, '/images/edit', { input, operations: '[{"flip":"v"}]', output: 'raw' })).body;
    stored.push({ url: r.json().url, bytes: raw, expiresNoEarlierThan: before + TTL_SECONDS * 1000 });
    round++;
    // Download every result so far from the next process.
    for (const s of stored) {
      const started = Date.now();
      const d = await get(servers[round % 3]!.url, pathOf(s.url));
      assert.ok(d.status === 200 || d.status === 404, `status ${d.status}`);
      if (started < s.expiresNoEarlierThan - 250) {
        assert.is(d.status, 200, 'an unexpired result was lost');
        assert.ok(d.body.equals(s.bytes));
      }
      if (d.status === 200) assert.ok(d.body.equals(s.bytes), 'whole bytes or nothing');
      checks++;
    }
    await sleep(100);
  }
  sweeping = false;
  await sweepLoop;
  assert.ok(sweeps > 5 && checks > 20, `${sweeps} sweeps, ${checks} downloads`);
  // Once everything expired, one more sweep leaves no result file.
  await waitFor('every result to expire', async () => {
    for (const s of stored) if ((await get(servers[0]!.url, pathOf(s.url))).status !== 404) return false;
    return true;
  });
  for (const s of stored) assert.is((await get(servers[0]!.url, pathOf(s.url))).status, 404);
  await sweepers[0]!.sweep();
  assert.equal((await readdir(dir)).filter((f) => !f.startsWith('.tmp-')), []);
});

test('a process SIGKILLed while writing a large result: no partial result visible, the client is not told it was stored, a later sweep removes the temporary file', async () => {
  const victim = await spawnServer({ MATTE_API_KEYS: TEST_KEY, MATTE_RESULTS_DIR: dir, MATTE_RESULT_TTL_SECONDS: '60', MATTE_CONCURRENCY: '1' });
  // Upscaled noise compresses badly: the PNG result is several MB, so its write and fsync take a while.
  const noise = makePng(200, 200, () => [Math.floor(Math.random() * 256), Math.floor(Math.random() * 256), Math.floor(Math.random() * 256)]);
  const before = new Set(await readdir(dir));
  let sawTemp = '';
  const watcher = watch(dir, (_event, name) => {
    if (!sawTemp && name && name.startsWith('.tmp-')) {
      sawTemp = name;
      victim.child.kill('SIGKILL');
    }
  });
  const answer = post(victim.url, '/images/edit', { input: noise, operations: '[{"resize":{"width":2000,"height":2000,"fit":"cover"}}]' }).then(
    (r) => (r.status === 200 ? (r.json() as { url: string }) : r.status),
    () => 'connection lost' as const,
  );
  // A backstop so that a missed event fails the test instead of hanging it.
  const backstop = setTimeout(() => victim.child.kill('SIGKILL'), 30_000);
  const status = await answer;
  watcher.close();
  clearTimeout(backstop);
  assert.is(await victim.exited, 'SIGKILL');
  assert.ok(sawTemp, 'the kill happened while a temporary file existed');
  if (typeof status === 'object') {
    // The kill came late (a loaded machine): then the client was told only because it is stored whole.
    const stored = await get(servers[0]!.url, pathOf(status.url));
    assert.is(stored.status, 200, 'a result reported as stored is there');
    assert.ok(isPng(stored.body) && stored.body.subarray(-8, -4).toString('latin1') === 'IEND');
  } else {
    assert.is(status, 'connection lost', 'the client was never told the result was stored');
  }

  const after = (await readdir(dir)).filter((f) => !before.has(f));
  // Whatever committed name exists is a whole PNG (the kill may land after the rename); usually none does.
  for (const name of after.filter((f) => !f.startsWith('.tmp-'))) {
    const bytes = await readFile(join(dir, name));
    assert.ok(isPng(bytes) && bytes.subarray(-8, -4).toString('latin1') === 'IEND', `${name} is a whole PNG`);
    assert.is((await get(servers[0]!.url, `/images/results/${name}`)).status, 200);
  }
  // The other processes do not see the half file, and their sweeps leave a young temporary file
  // alone (its writer could be alive); a sweep once it is abandoned (grace 0 here) removes it.
  const leftovers = after.filter((f) => f.startsWith('.tmp-'));
  await new DiskResultStore({ dir, ttlSeconds: 60, sweepIntervalMs: 0 }).sweep();
  for (const name of leftovers) assert.ok((await readdir(dir)).includes(name), 'a young temporary file is not removed');
  await new DiskResultStore({ dir, ttlSeconds: 60, sweepIntervalMs: 0, tempGraceMs: 0 }).sweep();
  assert.equal((await readdir(dir)).filter((f) => f.startsWith('.tmp-')), []);
});

test.run();
