// run-tests: parallel
// A batch's names as an attacker (or an unlucky bucket) makes them (issue 41, findings 5 to 7),
// with the real command in real processes, local folders and a real S3-protocol server (s3rver
// on loopback): a legal but long name fails only its own input (exit 1), never the batch (exit
// 3, which an Indexed Job retries forever); -o equal to an input folder or inside one is refused
// before anything is written; a result name with an empty, "." or ".." segment, a NUL, or a key
// over 1024 bytes is refused for a bucket output as for a folder, before its job and its PUT.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { outputsOf } from '../../cli/batch-outputs.js';
import { BucketClient } from '../../cli/bucket.js';
import { CliError } from '../../cli/errors.js';
import type { Item } from '../../cli/batch-inputs.js';
import { parseLocation } from '../../cli/locations.js';
import { lines, runCli } from '../helpers/cli.js';
import { makePng } from '../helpers/images.js';
import { startTestS3, type TestS3 } from '../helpers/s3.js';

const BUCKET = 'names';
let dir: string;
let s3: TestS3;
let env: Record<string, string>;

const image = (i: number) => makePng(32, 24, (x) => (x < 16 ? [i * 20, 100, 200] : [250, 250 - i * 20, 10]));
const flip = ['--op', '{"flip":"h"}'];

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'matte-names-'));
  s3 = await startTestS3(BUCKET);
  env = { MATTE_S3_ENDPOINT: s3.endpoint, MATTE_S3_FORCE_PATH_STYLE: '1', AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
});
test.after(async () => {
  await s3?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function folderOf(name: string, files: Record<string, Buffer>): Promise<string> {
  const folder = join(dir, name);
  await mkdir(folder, { recursive: true });
  for (const [file, data] of Object.entries(files)) await writeFile(join(folder, file), data);
  return folder;
}

const tenImages = () => Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`img-${i}.png`, image(i)]));

test('a 244-byte file name among ten images: done like the others (its temporary file is short), exit 0', async () => {
  const long = `${'L'.repeat(240)}.png`;
  const input = await folderOf('long-in', { [long]: image(1), ...tenImages() });
  const out = join(dir, 'long-out');
  const run = await runCli(['edit', input, '-o', out, ...flip, '--json']);
  assert.is(run.code, 0, run.stderr);
  const summary = JSON.parse(lines(run.stdout).at(-1)!);
  assert.equal([summary.total, summary.done, summary.failed], [11, 11, 0]);
  assert.ok((await readdir(out)).includes(long));
  assert.not.ok((await readdir(out)).some((name) => name.endsWith('.partial')), 'no temporary file left');
});

test('a name whose result is longer than a file name may be (a 255-byte .tif to .webp): that input fails alone, the ten are done, exit 1', async () => {
  const long = `${'T'.repeat(251)}.tif`;
  const input = await folderOf('toolong-in', { [long]: image(2), ...tenImages() });
  const out = join(dir, 'toolong-out');
  const run = await runCli(['edit', input, '-o', out, ...flip, '-f', 'webp', '--json']);
  assert.is(run.code, 1, `exit 1, not 3 (batch_stopped): ${run.stderr}`);
  assert.not.match(run.stderr, /batch_stopped/);
  const summary = JSON.parse(lines(run.stdout).at(-1)!);
  assert.equal([summary.total, summary.done, summary.failed], [11, 10, 1]);
  const failed = summary.files.find((f: any) => !f.ok);
  assert.is(failed.error.code, 'invalid_input');
  assert.match(failed.error.message, /has a segment longer than 255 bytes/);
  assert.is((await readdir(out)).length, 10, 'the ten results, no temporary file');
});

test('from a bucket: a 233-byte name is done into a folder; a key over 1024 bytes fails alone into a folder and into a bucket, with no PUT', async () => {
  const segment = 'K'.repeat(200);
  const tooLong = `in/${Array.from({ length: 5 }, () => segment).join('/')}/x.png`; // a name of 1010 bytes under in/
  const longName = `${'N'.repeat(229)}.png`;
  const keys = [`in/${longName}`, tooLong, ...Array.from({ length: 5 }, (_, i) => `in/img-${i}.png`)];
  for (const [i, key] of keys.entries()) await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: image(i) }));

  const folder = join(dir, 'from-bucket');
  const local = await runCli(['edit', `s3://${BUCKET}/in/`, '-o', folder, ...flip, '--json'], { env });
  assert.is(local.code, 0, `the 233-byte name is done, the 1010-byte one fits a folder's 1024: ${local.stderr}`);
  assert.ok((await readdir(folder)).includes(longName));

  // Into a bucket prefix of 21 bytes: the long key's result is over 1024 bytes.
  const putsBefore = s3.puts.length;
  const out = `s3://${BUCKET}/cutouts-0123456789ab/`;
  const run = await runCli(['edit', `s3://${BUCKET}/in/`, '-o', out, ...flip, '--json'], { env });
  assert.is(run.code, 1, `exit 1, not 3: ${run.stderr}`);
  const summary = JSON.parse(lines(run.stdout).at(-1)!);
  assert.equal([summary.total, summary.done, summary.failed], [7, 6, 1]);
  const written = s3.puts.slice(putsBefore);
  assert.is(written.filter((key) => !key.includes('.matte/')).length, 6, 'a PUT for each result done, none for the refused one');
  assert.not.ok(written.some((key) => key.includes(segment)), 'no PUT of the long key');
  const report = written.find((key) => key.includes('.matte/failures-'));
  assert.ok(report, 'the failure report is written');
});

async function nothingChanged(folder: string, files: Record<string, Buffer>): Promise<void> {
  assert.equal((await readdir(folder)).sort(), Object.keys(files).sort());
  for (const [name, data] of Object.entries(files)) assert.ok((await readFile(join(folder, name))).equals(data), `${name} unchanged`);
}

test('-o the input folder (or inside it, or the same by a link or by ".."), with --force: refused before anything is written, exit 1', async () => {
  const files = { 'a.jpg': image(3), 'a.png': image(4) };
  const same = await folderOf('same', files);
  const link = join(dir, 'same-link');
  await symlink(same, link);
  for (const output of [same, join(same, 'cutouts'), `${join(dir, 'same', '..', 'same')}/`, link, join(link, 'sub')]) {
    const run = await runCli(['remove-background', same, '-o', output, '--force']);
    assert.is(run.code, 1, run.stderr);
    assert.is(lines(run.stderr).length, 1, run.stderr);
    assert.match(run.stderr, /is the input folder .* or inside it/);
    await nothingChanged(same, files);
  }
  // A file of the folder as input (not the folder) is the user's explicit choice: allowed.
  const run = await runCli(['edit', join(same, 'a.jpg'), '-o', `${same}/`, ...flip, '-f', 'webp']);
  assert.is(run.code, 0, run.stderr);
});

test('one name rule for folder and bucket outputs: "..", ".", empty segments, a leading "/", NUL: refused before the job, no PUT', async () => {
  const client = await BucketClient.open({ ...env, MATTE_S3_BUCKET: BUCKET });
  try {
    const bucket = await outputsOf(parseLocation(`s3://${BUCKET}/cutouts/`), { client: () => client, settings: () => ({}), force: false, shard: { index: 0, count: 1 } });
    const folder = await outputsOf(parseLocation(join(dir, 'rule-out')), { client: () => client, settings: () => ({}), force: false, shard: { index: 0, count: 1 } });
    const putsBefore = s3.puts.length;
    for (const name of ['sub/../../raw/victim.png', '../escape.png', 'a/./b.png', 'a//b.png', '/abs.png', 'nul\0.png', 'trailing/..']) {
      const item: Item = { name, key: `in/${name}`, label: `s3://${BUCKET}/in/${name}`, version: '"etag"', read: async () => image(5) };
      for (const [kind, outputs] of [['bucket', bucket], ['folder', folder]] as const) {
        const err = await outputs.prepare(item, name).then(() => undefined, (e: unknown) => e);
        assert.ok(err instanceof CliError && err.code === 'invalid_input' && /its result's name/.test(err.message), `${kind}: ${JSON.stringify(name)}: ${err}`);
      }
    }
    assert.is(s3.puts.length, putsBefore, 'no PUT');
    // A plain name with folders is still fine.
    const item: Item = { name: 'shoes/a.png', key: 'in/shoes/a.png', label: 'in/shoes/a.png', version: '"etag"', read: async () => image(5) };
    assert.is(await bucket.prepare(item, 'shoes/a.png'), 'run');
    assert.is(await folder.prepare(item, 'shoes/a.png'), 'run');
  } finally {
    client.close();
  }
});

test.run();
