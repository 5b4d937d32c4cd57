// run-tests: parallel
// Stored results: download with the exact bytes and headers, HEAD, Range, conditional requests,
// expiry (a 2 s lifetime), and the disk store's atomic files and start-up clean-up.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DiskResultStore } from '../../server/store/index.js';
import { parseRange } from '../../server/routes/results.js';
import { gradient } from '../helpers/images.js';
import { get, post, startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

let server: TestServer;
const png = gradient(50, 40);
const ops = '[{"resize":{"width":25}}]';

test.before(async () => {
  server = await startTestServer({ MATTE_RESULT_TTL_SECONDS: '2' });
});
test.after(async () => {
  await server.close();
});

async function store(format = 'png') {
  const raw = await post(server.url, '/images/edit', { input: png, operations: ops, format, output: 'raw' });
  const r = await post(server.url, '/images/edit', { input: png, operations: ops, format });
  assert.is(r.status, 200);
  return { raw: raw.body, ...(r.json() as { id: string; url: string }) };
}

test('GET: the exact bytes of the raw output, with type, length, ETag, Cache-Control, Disposition', async () => {
  const { raw, id, url } = await store();
  const d = await get(url, '');
  assert.is(d.status, 200);
  assert.ok(d.body.equals(raw), 'same bytes as output=raw');
  assert.is(d.headers.get('content-type'), 'image/png');
  assert.is(d.headers.get('content-length'), String(raw.length));
  assert.is(d.headers.get('etag'), `"${id}"`);
  assert.match(d.headers.get('cache-control') ?? '', /^private, max-age=[0-2]$/);
  assert.match(d.headers.get('content-disposition') ?? '', /^inline/);
  assert.is(d.headers.get('accept-ranges'), 'bytes');
  assert.ok(d.headers.get('x-request-id'));
});

test('every format is stored under its extension with its media type', async () => {
  for (const format of ['webp', 'jpeg', 'gif', 'avif']) {
    const { url } = await store(format);
    assert.ok(url.endsWith(`.${format}`), url);
    const d = await get(url, '');
    assert.is(d.headers.get('content-type'), `image/${format}`);
  }
});

test('HEAD: the headers of GET, no body', async () => {
  const { raw, url } = await store();
  const h = await get(url, '', { method: 'HEAD' });
  assert.is(h.status, 200);
  assert.is(h.headers.get('content-length'), String(raw.length));
  assert.is(h.headers.get('content-type'), 'image/png');
  assert.is(h.body.length, 0);
});

test('Range: 206 with Content-Range for a range, a suffix and an open end; 416 past the end', async () => {
  const { raw, url } = await store();
  const a = await get(url, '', { headers: { Range: 'bytes=0-9' } });
  assert.is(a.status, 206);
  assert.is(a.headers.get('content-range'), `bytes 0-9/${raw.length}`);
  assert.ok(a.body.equals(raw.subarray(0, 10)));
  const b = await get(url, '', { headers: { Range: 'bytes=-5' } });
  assert.is(b.status, 206);
  assert.ok(b.body.equals(raw.subarray(raw.length - 5)));
  const c = await get(url, '', { headers: { Range: `bytes=${raw.length - 3}-` } });
  assert.ok(c.body.equals(raw.subarray(raw.length - 3)));
  const d = await get(url, '', { headers: { Range: `bytes=${raw.length}-` } });
  assert.is(d.status, 416);
  assert.is(d.headers.get('content-range'), `bytes */${raw.length}`);
  assert.is(d.json().error.code, 'range_not_satisfiable');
  const headRange = await get(url, '', { method: 'HEAD', headers: { Range: 'bytes=0-3' } });
  assert.is(headRange.status, 206);
  assert.is(headRange.headers.get('content-length'), '4');
});

test('If-None-Match with the ETag is 304; If-Range with another validator gives the whole', async () => {
  const { id, raw, url } = await store();
  const n = await get(url, '', { headers: { 'If-None-Match': `"${id}"` } });
  assert.is(n.status, 304);
  const r = await get(url, '', { headers: { Range: 'bytes=0-1', 'If-Range': '"other"' } });
  assert.is(r.status, 200);
  assert.is(r.body.length, raw.length);
});

test('unknown id, malformed name and wrong extension are 404 not_found', async () => {
  const { id } = await store();
  for (const path of ['/images/results/AAAAAAAAAAAAAAAAAAAAAAAA.png', `/images/results/${id}.webp`, `/images/results/${id}`, '/images/results/..%2F..%2Fetc%2Fpasswd', '/images/results/x.png']) {
    const r = await get(server.url, path);
    assert.is(r.status, 404, path);
    assert.is(r.json().error.code, 'not_found');
  }
  assert.is((await get(server.url, '/images/results/AAAAAAAAAAAAAAAAAAAAAAAA.png', { method: 'HEAD' })).status, 404);
});

test('ids are 144-bit, URL-safe and never repeat', async () => {
  const ids = new Set<string>();
  for (let i = 0; i < 5; i++) ids.add((await store()).id);
  assert.is(ids.size, 5);
  for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{24}$/);
});

test('after the lifetime a result is 404, and its file is swept', async () => {
  const { url, id } = await store();
  assert.is((await get(url, '')).status, 200);
  const gone = await waitFor('the result to expire', async () => {
    const r = await get(url, '');
    return r.status === 404 && r;
  });
  assert.is(gone.status, 404);
  assert.is(gone.json().error.code, 'not_found');
  const files = await waitFor('the expired file to be swept', async () => {
    const names = await readdir(server.resultsDir);
    return !names.some((f) => f.startsWith(id)) && names;
  });
  assert.not.ok(files.some((f) => f.startsWith(id)), files.join(' '));
});

// ---- the disk store itself --------------------------------------------------------------------------------

test('store: a committed result is one file named id.ext whose mtime is its expiry; no temporary file is left', async () => {
  const dir = await tempDir();
  const s = new DiskResultStore({ dir, ttlSeconds: 60 });
  await s.open();
  const r = await s.put(Buffer.from('abc'), { ext: 'png', mediaType: 'image/png' });
  const files = await readdir(dir);
  assert.equal(files, [`${r.id}.png`]);
  assert.ok(r.expiresAt > Date.now() + 59_000);
  assert.is(Math.round((await stat(join(dir, files[0]!))).mtimeMs), r.expiresAt);
  // Another store on the same directory (another process) answers for it at once: no index.
  const other = new DiskResultStore({ dir, ttlSeconds: 60, sweepIntervalMs: 0 });
  await other.open();
  assert.equal(await other.get(r.id, 'png'), r);
  assert.is(await other.get(r.id, 'webp'), undefined);
  await s.close();
  await other.close();
  await rm(dir, { recursive: true, force: true });
});

test('store: open removes abandoned temporary files and expired results, keeps the rest and recent temporary files', async () => {
  const dir = await tempDir();
  const first = new DiskResultStore({ dir, ttlSeconds: 60 });
  await first.open();
  const kept = await first.put(Buffer.from('keep'), { ext: 'webp', mediaType: 'image/webp' });
  await first.close();
  const old = Date.now() - 20 * 60_000;
  await writeFile(join(dir, `.tmp-${old}-crashed-half-file`), 'half');
  await writeFile(join(dir, `.tmp-${Date.now()}-being-written-by-another-process`), 'busy');
  await writeFile(join(dir, 'AAAAAAAAAAAAAAAAAAAAAAAA.png'), 'expired');
  await utimes(join(dir, 'AAAAAAAAAAAAAAAAAAAAAAAA.png'), (Date.now() - 1000) / 1000, (Date.now() - 1000) / 1000);
  const second = new DiskResultStore({ dir, ttlSeconds: 60 });
  await second.open();
  assert.equal((await readdir(dir)).sort(), [`.tmp-${(await readdir(dir)).find((f) => f.includes('being-written'))!.slice(5)}`, `${kept.id}.webp`].sort());
  const again = await second.get(kept.id, 'webp');
  assert.is(again?.size, 4);
  assert.is(again?.mediaType, 'image/webp');
  assert.is(await second.get('AAAAAAAAAAAAAAAAAAAAAAAA', 'png'), undefined);
  assert.ok(await second.writable());
  await second.close();
  await rm(dir, { recursive: true, force: true });
});

test('store: results of the previous layout (id.expiresAtMs.ext) are moved, not lost', async () => {
  const dir = await tempDir();
  const expiresAt = Date.now() + 30_000;
  await writeFile(join(dir, `BBBBBBBBBBBBBBBBBBBBBBBB.${expiresAt}.png`), 'old layout');
  await writeFile(join(dir, `CCCCCCCCCCCCCCCCCCCCCCCC.${Date.now() - 1}.png`), 'old and expired');
  const s = new DiskResultStore({ dir, ttlSeconds: 60 });
  await s.open();
  assert.equal(await readdir(dir), ['BBBBBBBBBBBBBBBBBBBBBBBB.png']);
  const r = await s.get('BBBBBBBBBBBBBBBBBBBBBBBB', 'png');
  assert.is(r?.expiresAt, expiresAt);
  assert.is(r?.size, 10);
  await s.close();
  await rm(dir, { recursive: true, force: true });
});

test('store: the sweeper deletes expired results', async () => {
  const dir = await tempDir();
  let now = Date.now();
  const s = new DiskResultStore({ dir, ttlSeconds: 10, sweepIntervalMs: 0, now: () => now });
  await s.open();
  const a = await s.put(Buffer.from('a'), { ext: 'png', mediaType: 'image/png' });
  await s.put(Buffer.from('b'), { ext: 'png', mediaType: 'image/png' });
  now += 9_000;
  assert.is(await s.sweep(), 0);
  assert.ok(await s.get(a.id, 'png'));
  now += 1_000;
  assert.is(await s.sweep(), 2);
  assert.is(await s.get(a.id, 'png'), undefined);
  assert.equal(await readdir(dir), []);
  await s.close();
  await rm(dir, { recursive: true, force: true });
});

test('parseRange', () => {
  assert.equal(parseRange('bytes=0-0', 10), { start: 0, end: 0 });
  assert.equal(parseRange('bytes=5-100', 10), { start: 5, end: 9 });
  assert.equal(parseRange('bytes=-100', 10), { start: 0, end: 9 });
  assert.is(parseRange('bytes=10-', 10), 'unsatisfiable');
  assert.is(parseRange('bytes=-0', 10), 'unsatisfiable');
  assert.is(parseRange('bytes=0-1,3-4', 10), undefined);
  assert.is(parseRange('items=0-1', 10), undefined);
  assert.is(parseRange('bytes=5-1', 10), undefined);
  assert.is(parseRange(undefined, 10), undefined);
});

test.run();
