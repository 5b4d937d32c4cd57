// run-tests: parallel
// Bucket to bucket (`s3://bucket/prefix/` in and out) with the real command in real processes
// against a real S3-protocol server (s3rver on loopback), listing in pages of 7 keys: three shards
// as three processes take every key exactly once; a shard killed with SIGKILL part-way and run
// again finishes without writing any result twice or leaving one half-written; corrupt, oversized
// and foreign inputs land in the failure report with their codes while the rest are done; an
// output inside the input is refused before anything is written; bad arguments are one line.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { lines, MATTE_BIN, runCli, type CliRun } from '../helpers/cli.js';
import { deflateSync } from 'node:zlib';
import { chunk } from '../helpers/crafted.js';
import { decode, formatOf, makePng, pixel } from '../helpers/images.js';
import { startTestS3, type TestS3 } from '../helpers/s3.js';
import { waitFor } from '../helpers/wait.js';

const BUCKET = 'bulk';
let s3: TestS3;
let env: Record<string, string>;
/** raw/: 60 small images in three folders, two of them JPEGs. */
const keys: string[] = [];

const image = (i: number) => makePng(48, 32, (x, y) => (x < 24 ? [i * 4, 100, 200 - y] : [250, 250 - i * 4, 10]));

async function put(key: string, body: Buffer | string): Promise<void> {
  await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
}

async function list(prefix: string): Promise<string[]> {
  const out: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ContinuationToken: token }));
    out.push(...(page.Contents ?? []).map((o) => o.Key!));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out;
}

async function read(key: string): Promise<Buffer> {
  const out = await s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return Buffer.from(await out.Body!.transformToByteArray());
}

/** The documented shard of a relative name: SHA-256 of the name without its extension, first 8 bytes big-endian, mod N. */
function shardOf(name: string, count: number): number {
  const stem = name.slice(0, name.length - extname(name).length);
  return Number(createHash('sha256').update(stem).digest().readBigUInt64BE(0) % BigInt(count));
}

/** How often each key was written (PutObject) since `from`. */
function putCounts(from: number, prefix: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of s3.puts.slice(from)) if (key.startsWith(prefix)) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}

function assertOneLine(run: CliRun, pattern: RegExp): void {
  assert.is(run.code, 1, `exit code (stderr: ${run.stderr})`);
  assert.is(lines(run.stderr).length, 1, run.stderr);
  assert.match(run.stderr, pattern);
  assert.not.match(run.stderr, /\n\s+at /);
}

test.before(async () => {
  s3 = await startTestS3(BUCKET);
  env = {
    MATTE_S3_ENDPOINT: s3.endpoint,
    MATTE_S3_FORCE_PATH_STYLE: '1',
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    // 60 keys in pages of 7: the listing's continuation tokens are used nine times.
    MATTE_S3_LIST_PAGE_SIZE: '7',
  };
  for (let i = 0; i < 60; i++) {
    const key = `raw/${['shoes', 'bags', 'hats'][i % 3]}/item-${String(i).padStart(2, '0')}.png`;
    keys.push(key);
    await put(key, image(i));
  }
});
test.after(async () => {
  await s3?.close();
});

test('three shards as three processes (--shard, --shards with JOB_COMPLETION_INDEX, MATTE_SHARDS) take every key exactly once', async () => {
  const before = s3.puts.length;
  const args = ['edit', `s3://${BUCKET}/raw/`, '-o', `s3://${BUCKET}/flipped/`, '--op', '{"flip":"h"}', '--json', '--jobs', '2'];
  const runs = await Promise.all([
    runCli([...args, '--shard', '0/3'], { env }),
    runCli([...args, '--shards', '3'], { env: { ...env, JOB_COMPLETION_INDEX: '1' } }),
    runCli(args, { env: { ...env, JOB_COMPLETION_INDEX: '2', MATTE_SHARDS: '3' } }),
  ]);
  for (const [i, run] of runs.entries()) {
    assert.is(run.code, 0, run.stderr);
    const summary = JSON.parse(run.stdout);
    const mine = keys.filter((key) => shardOf(key.slice('raw/'.length), 3) === i).length;
    assert.ok(mine > 5, 'the hash spreads the keys');
    assert.equal([summary.total, summary.done, summary.failed, summary.shard], [mine, mine, 0, `${i}/3`]);
    assert.is(summary.report, `s3://${BUCKET}/flipped/.matte/failures-${i}-of-3.jsonl`);
  }
  const results = keys.map((key) => key.replace('raw/', 'flipped/'));
  assert.equal((await list('flipped/')).filter((k) => !k.startsWith('flipped/.matte/')).sort(), [...results].sort());
  const counts = putCounts(before, 'flipped/');
  for (const key of results) assert.is(counts.get(key), 1, `${key} written once`);
  for (let i = 0; i < 3; i++) assert.is((await read(`flipped/.matte/failures-${i}-of-3.jsonl`)).length, 0, 'empty failure reports');
  // The result is the input flipped: the left half is now the right one.
  const flipped = await decode(await read('flipped/bags/item-07.png'));
  assert.equal(pixel(flipped, 47, 0).slice(0, 3), [28, 100, 200]);
  assert.equal(pixel(flipped, 0, 0).slice(0, 3), [250, 222, 10]);

  // Run again: every result carries its marker, so nothing is redone.
  const again = await runCli([...args, '--shard', '1/3'], { env });
  assert.is(again.code, 0, again.stderr);
  const summary = JSON.parse(again.stdout);
  assert.is(summary.done, 0);
  assert.is(summary.skipped, runs[1] && JSON.parse(runs[1].stdout).total);
  assert.equal([...putCounts(before, 'flipped/').entries()].filter(([key, n]) => n > 1 && !key.includes('.matte/')), []);
});

test('a result is made again when the background image changes under the same file name', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'matte-backdrop-'));
  try {
    const backdrop = join(dir, 'backdrop.png');
    const args = ['edit', `s3://${BUCKET}/raw/`, '-o', `s3://${BUCKET}/staged/`, '--background-image', backdrop, '--op', '{"backgroundImage":true}', '--shard', '0/3', '--json'];
    const mine = keys.filter((key) => shardOf(key.slice('raw/'.length), 3) === 0).length;
    const summaryOf = (run: CliRun) => {
      assert.is(run.code, 0, run.stderr);
      const summary = JSON.parse(run.stdout);
      return [summary.done, summary.skipped];
    };
    await writeFile(backdrop, makePng(8, 8, () => [255, 255, 255]));
    assert.equal(summaryOf(await runCli(args, { env })), [mine, 0]);
    assert.equal(summaryOf(await runCli(args, { env })), [0, mine], 'the same backdrop: nothing redone');
    await writeFile(backdrop, makePng(8, 8, () => [0, 0, 0]));
    assert.equal(summaryOf(await runCli(args, { env })), [mine, 0], 'another backdrop under the same name: made again');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a shard killed with SIGKILL part-way, run again: finished work is not redone, no result is half-written', async () => {
  const before = s3.puts.length;
  // Enlarged and blurred, one at a time: slow enough to be stopped part-way.
  const args = ['edit', `s3://${BUCKET}/raw/`, '-o', `s3://${BUCKET}/big/`, '--op', '{"resize":{"width":1200}}', '--op', '{"blur":6}', '-f', 'jpeg', '--jobs', '1'];
  const child = spawn(process.execPath, [MATTE_BIN, ...args, '--json'], { env: { ...process.env, ...env }, stdio: 'ignore' });
  const exited = new Promise<string | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  await waitFor('five results in the bucket', () => putCounts(before, 'big/').size >= 5, { timeoutMs: 60_000, intervalMs: 5 });
  child.kill('SIGKILL');
  assert.is(await exited, 'SIGKILL');
  const doneBefore = putCounts(before, 'big/').size;
  assert.ok(doneBefore < 60, `killed part-way (${doneBefore} of 60 done)`);

  const again = await runCli([...args, '--progress-every', '7'], { env, timeoutMs: 300_000 });
  assert.is(again.code, 0, again.stderr);
  const out = lines(again.stdout);
  assert.match(out[0]!, /^matte: 7\/(60|\?) objects, \d+ done, \d+ already done, 0 failed, [\d.]+\/s, eta \S+$/);
  assert.match(out[out.length - 2]!, /^matte: 60\/60 objects, \d+ done, \d+ already done, 0 failed, [\d.]+\/s, eta 0s$/);
  const summary = /^60 inputs: (\d+) done, 0 failed, (\d+) already done in [\d.]+ s \(1 at a time\) -> s3:\/\/bulk\/big\/$/.exec(out[out.length - 1]!);
  assert.ok(summary, again.stdout);
  assert.is(Number(summary[2]), doneBefore, 'what the killed run finished is skipped');
  assert.is(Number(summary[1]), 60 - doneBefore);

  const counts = putCounts(before, 'big/');
  const results = keys.map((key) => key.replace('raw/', 'big/').replace('.png', '.jpg'));
  for (const key of results) assert.is(counts.get(key), 1, `${key} written once`);
  for (const key of results) {
    const decoded = await decode(await read(key));
    assert.equal([decoded.width, decoded.height], [1200, 800], key);
  }
  const head = await s3.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'big/hats/item-02.jpg' }));
  assert.is(head.ContentType, 'image/jpeg');
  assert.ok(head.Metadata?.['matte-source-version'], 'the marker names the source version');
});

test('remove-background bucket to bucket: cut-outs with alpha, named after their inputs, the format\'s extension', async () => {
  const run = await runCli(['remove-background', `s3://${BUCKET}/raw/hats/`, '-o', `s3://${BUCKET}/cut`, '--format', 'webp', '--json', '--shard', '0/5'], { env, timeoutMs: 300_000 });
  assert.is(run.code, 0, run.stderr);
  const summary = JSON.parse(run.stdout);
  const mine = keys.filter((key) => key.startsWith('raw/hats/') && shardOf(key.slice('raw/hats/'.length), 5) === 0);
  assert.ok(mine.length > 0);
  assert.equal([summary.total, summary.done], [mine.length, mine.length]);
  const results = (await list('cut/')).filter((k) => !k.includes('.matte/'));
  assert.equal(results.sort(), mine.map((key) => key.replace('raw/hats/', 'cut/').replace('.png', '.webp')).sort());
  const cutout = await read(results[0]!);
  assert.is(formatOf(cutout), 'webp');
  assert.ok((await decode(cutout)).hasAlpha);
});

test('corrupt, oversized and foreign inputs land in the failure report with their codes; the rest are done; exit code 1', async () => {
  for (let i = 0; i < 4; i++) await put(`mixed/good-${i}.png`, image(i));
  await put('mixed/notes.txt', 'not an image at all');
  await put('mixed/broken.png', image(5).subarray(0, 60));
  const noise = randomBytes(300 * 300 * 3);
  await put('mixed/big.png', makePng(300, 300, (x, y) => [noise[(y * 300 + x) * 3]!, noise[(y * 300 + x) * 3 + 1]!, noise[(y * 300 + x) * 3 + 2]!]));
  // A PNG declaring 10001 x 10000 pixels: over the 100 MP limit, refused from its header.
  const ihdr = Buffer.from([0, 0, 0x27, 0x11, 0, 0, 0x27, 0x10, 8, 0, 0, 0, 0]);
  await put('mixed/huge.png', Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc(64))), chunk('IEND', Buffer.alloc(0))]));
  await put('mixed-out/good-3.png', 'an object matte did not write');
  const run = await runCli(['edit', `s3://${BUCKET}/mixed/`, '-o', `s3://${BUCKET}/mixed-out/`, '--op', '{"rotate":90}', '--max-input-bytes', '200000', '--json'], { env });
  assert.is(run.code, 1, run.stderr);
  const summary = JSON.parse(run.stdout);
  assert.equal([summary.total, summary.done, summary.failed], [8, 3, 5]);
  const report = (await read('mixed-out/.matte/failures-0-of-1.jsonl')).toString().trim().split('\n').map((line) => JSON.parse(line));
  const codes = Object.fromEntries(report.map((f: { key: string; code: string }) => [f.key, f.code]));
  assert.equal(codes, {
    'mixed/big.png': 'input_too_large',
    'mixed/broken.png': 'unsupported_image',
    'mixed/good-3.png': 'output_exists',
    'mixed/huge.png': 'image_too_large',
    'mixed/notes.txt': 'unsupported_image',
  } as never, JSON.stringify(report));
  for (const failure of report) assert.ok(failure.message.length > 0);
  assert.is((await read('mixed-out/good-3.png')).toString(), 'an object matte did not write');
  for (let i = 0; i < 3; i++) {
    const rotated = await decode(await read(`mixed-out/good-${i}.png`));
    assert.equal([rotated.width, rotated.height], [32, 48]);
  }
  // The text file's result would be notes.png, which nobody made.
  assert.equal((await list('mixed-out/')).sort(), ['mixed-out/.matte/failures-0-of-1.jsonl', 'mixed-out/good-0.png', 'mixed-out/good-1.png', 'mixed-out/good-2.png', 'mixed-out/good-3.png']);
});

test('a store that fails part-way stops the batch: one line, exit code 3 (worth a retry); the run again finishes', async () => {
  // A front on loopback that forwards to s3rver until the first result is written, then refuses
  // every connection: the store going away in the middle of a batch.
  const sockets = new Set<net.Socket>();
  let broken = false;
  const front = net.createServer((client) => {
    if (broken) return client.destroy();
    const upstream = net.connect(Number(new URL(s3.endpoint).port), '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (data) => {
      if (!broken && /^PUT \/bulk\/stop-out\/[^.]/.test(data.toString('latin1', 0, 40))) {
        broken = true;
        for (const socket of sockets) socket.destroy();
        return;
      }
      upstream.write(data);
    });
    upstream.on('data', (data) => client.write(data));
    for (const socket of [client, upstream]) socket.on('error', () => {}).on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  try {
    const endpoint = `http://127.0.0.1:${(front.address() as net.AddressInfo).port}`;
    const args = ['edit', `s3://${BUCKET}/raw/shoes/`, '-o', `s3://${BUCKET}/stop-out/`, '--op', '{"flip":"h"}', '--jobs', '1'];
    const stopped = await runCli(args, { env: { ...env, MATTE_S3_ENDPOINT: endpoint, MATTE_S3_TIMEOUT_SECONDS: '2' } });
    assert.ok(broken, 'the front broke part-way');
    assert.is(stopped.code, 3, stopped.stderr);
    assert.is(lines(stopped.stderr).length, 1, stopped.stderr);
    assert.not.match(stopped.stderr, /\n\s+at /);
    const again = await runCli(args, { env });
    assert.is(again.code, 0, again.stderr);
    assert.is((await list('stop-out/')).filter((key) => !key.startsWith('stop-out/.matte/')).length, 20);
  } finally {
    front.close();
    for (const socket of sockets) socket.destroy();
  }
});

test('an output prefix inside the input prefix (or the reverse) is refused before anything is written', async () => {
  const before = s3.puts.length;
  assertOneLine(await runCli(['remove-background', `s3://${BUCKET}/raw/`, '-o', `s3://${BUCKET}/raw/cutouts/`], { env }), /^matte: the output s3:\/\/bulk\/raw\/cutouts\/ is inside the input s3:\/\/bulk\/raw\/: /);
  assertOneLine(await runCli(['remove-background', `s3://${BUCKET}/raw`, '-o', `s3://${BUCKET}/raw`], { env }), /is inside the input/);
  assertOneLine(await runCli(['edit', `s3://${BUCKET}/raw/shoes/`, '-o', `s3://${BUCKET}/`, '--op', '{"blur":1}'], { env }), /^matte: the input s3:\/\/bulk\/raw\/shoes\/ is inside the output s3:\/\/bulk\/: /);
  assert.is(s3.puts.length, before, 'nothing written');
  assert.equal(await list('raw/cutouts/'), []);
});

test('bad arguments: one line, exit code 1, never a stack trace', async () => {
  const edit = (...extra: string[]) => ['edit', `s3://${BUCKET}/raw/`, '-o', `s3://${BUCKET}/x/`, '--op', '{"blur":1}', ...extra];
  assertOneLine(await runCli(edit('--shard', '3/2'), { env }), /^matte: option '--shard <i\/n>' argument '3\/2' is invalid\. --shard 3\/2: the shard index must be below the count \(0\.\.1\)/);
  assertOneLine(await runCli(edit('--shard', 'three'), { env }), /--shard must be I\/N, the shard's index from 0 and the count \(e\.g\. 3\/16\), not "three"/);
  assertOneLine(await runCli(['rmbg', `gs://${BUCKET}/raw/`, '-o', `s3://${BUCKET}/x/`], { env }), /^matte: gs:\/\/bulk\/raw\/: unknown scheme "gs:\/\/"/);
  assertOneLine(await runCli(['rmbg', `s3://no-such-bucket/raw/`, '-o', `s3://${BUCKET}/x/`], { env }), /^matte: s3:\/\/no-such-bucket\/raw\/: no such bucket$/m);
  assertOneLine(await runCli(['rmbg', `s3://${BUCKET}/raw/`, '-o', `s3://Bad_Bucket/x/`], { env }), /"Bad_Bucket" is not a bucket name/);
  assertOneLine(await runCli(edit(), { env: { ...env, JOB_COMPLETION_INDEX: '4' } }), /JOB_COMPLETION_INDEX=4 is set but not the shard count: set MATTE_SHARDS/);
  assertOneLine(await runCli(edit(), { env: { ...env, JOB_COMPLETION_INDEX: '4', MATTE_SHARDS: '4' } }), /JOB_COMPLETION_INDEX=4 with MATTE_SHARDS=4: the shard index must be below the count/);
  assertOneLine(await runCli(edit('--shards', '4'), { env }), /--shards 4 needs JOB_COMPLETION_INDEX/);
  assertOneLine(await runCli(edit(), { env: { ...env, MATTE_S3_ENDPOINT: 'ftp://x' } }), /MATTE_S3_ENDPOINT="ftp:\/\/x" must be an http: or https: URL/);
  assertOneLine(await runCli(edit('-o', '-'), { env }), /- \(standard input or output\) works with one input and one output file/);
});

test.run();
