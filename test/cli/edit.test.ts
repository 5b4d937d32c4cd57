// run-tests: parallel
// `matte edit` run as a real process on real files: the result's pixels and format, the format
// from the extension or --format, --ops files, no overwrite without --force, and one clear line
// with a non-zero exit code for every kind of bad input.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lines, runCli } from '../helpers/cli.js';
import { convert, decode, formatOf, gradient, pixel, solid } from '../helpers/images.js';
import { tempDir } from '../helpers/server.js';

let dir: string;
let input: string;

test.before(async () => {
  dir = await tempDir('matte-cli-');
  input = join(dir, 'in.png');
  await writeFile(input, gradient(400, 300));
});

/** Exactly one line on stderr, no stack trace, exit code 1. */
function assertOneLineError(run: { code: number | null; stderr: string }, pattern: RegExp): void {
  assert.is(run.code, 1, `exit code (stderr: ${run.stderr})`);
  assert.is(lines(run.stderr).length, 1, `one line: ${run.stderr}`);
  assert.match(run.stderr, /^matte: /);
  assert.match(run.stderr, pattern);
  assert.not.match(run.stderr, /\n\s+at /);
}

test('--op in order, format from the extension, the result written and described', async () => {
  const out = join(dir, 'small.webp');
  const run = await runCli(['edit', input, '-o', out, '--op', '{"resize":{"width":200}}', '--op', '{"flip":"h"}']);
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stdout, /200x150 webp/);
  const data = await readFile(out);
  assert.is(formatOf(data), 'webp');
  const image = await decode(data);
  assert.is(image.width, 200);
  assert.is(image.height, 150);
  // Flipped: the red gradient now falls from left to right.
  assert.ok(pixel(image, 5, 75)[0] > pixel(image, 194, 75)[0] + 100);
});

test('--ops file, --format over the extension, --quality, --json', async () => {
  const ops = join(dir, 'ops.json');
  await writeFile(ops, JSON.stringify([{ resize: { width: 100, height: 100, fit: 'cover' } }, { background: '#00ff00' }]));
  const out = join(dir, 'out.img');
  const run = await runCli(['edit', input, '-o', out, '--ops', ops, '--format', 'jpeg', '--quality', '50', '--json']);
  assert.is(run.code, 0, run.stderr);
  const summary = JSON.parse(run.stdout);
  assert.equal({ format: summary.format, width: summary.width, height: summary.height, output: summary.output }, { format: 'jpeg', width: 100, height: 100, output: out });
  const data = await readFile(out);
  assert.is(summary.bytes, data.length);
  assert.is(formatOf(data), 'jpeg');
});

test('an existing output is kept without --force, replaced with it', async () => {
  const out = join(dir, 'keep.png');
  await writeFile(out, 'precious');
  const refused = await runCli(['edit', input, '-o', out, '--op', '{"blur":1}']);
  assertOneLineError(refused, /keep\.png already exists \(use --force to overwrite\)/);
  assert.is(await readFile(out, 'utf8'), 'precious');
  const forced = await runCli(['edit', input, '-o', out, '--op', '{"blur":1}', '--force']);
  assert.is(forced.code, 0, forced.stderr);
  assert.is(formatOf(await readFile(out)), 'png');
  // The result took its name in one step: no temporary file is left beside it.
  assert.equal((await readdir(dir)).filter((name) => name.endsWith('.partial')), []);
});

test('the responsive-image operations: pad to a box, sharpen, and the quality by format', async () => {
  const out = join(dir, 'card.png');
  const run = await runCli(['edit', input, '-o', out, '--op', '{"resize":{"width":100,"height":100,"fit":"pad","background":"blue","dpr":2}}', '--op', '{"sharpen":1}']);
  assert.is(run.code, 0, run.stderr);
  const image = await decode(await readFile(out));
  assert.equal([image.width, image.height], [200, 200]);
  assert.equal(pixel(image, 100, 0), [0, 0, 255, 255], 'the box above the 200x150 image');
  const avif = join(dir, 'card.avif');
  assert.is((await runCli(['edit', input, '-o', avif, '--op', '{"crop":{"left":10}}'])).code, 0);
  assert.is(formatOf(await readFile(avif)), 'avif');
});

test('bad input: one clear line, exit code 1, never a stack trace', async () => {
  const out = join(dir, 'never.png');
  assertOneLineError(await runCli(['edit', join(dir, 'missing.png'), '-o', out, '--op', '{"blur":1}']), /cannot read .*missing\.png: no such file or directory/);
  assertOneLineError(await runCli(['edit', dir, '-o', out, '--op', '{"blur":1}']), /a batch writes into a folder or s3:\/\/bucket\/prefix\/, and .*never\.png names a file/);
  assertOneLineError(await runCli(['edit', input, '-o', out, '--op', '{"blur":']), /--op number 1 is not valid JSON/);
  assertOneLineError(await runCli(['edit', input, '-o', out, '--op', '{"blur":500}']), /operations\[0\]\.blur must be at most 250 \(invalid_operations\)/);
  assertOneLineError(await runCli(['edit', input, '-o', out, '--op', '{"resize":{"width":10}}', '--op', '{"watermark":1}']), /operations\[1\]/);
  assertOneLineError(await runCli(['edit', input, '-o', out]), /no operations/);
  assertOneLineError(await runCli(['edit', input, '-o', join(dir, 'x.bmp'), '--op', '{"blur":1}']), /cannot tell the format/);
  assertOneLineError(await runCli(['edit', input, '-o', out, '--op', '{"blur":1}', '--quality', 'high']), /--quality must be a whole number/);
  assertOneLineError(await runCli(['edit', input, '-o', out, '--op', '{"blur":1}', '--quality', '101']), /quality/);
  assertOneLineError(await runCli(['edit', input, '-o', out, '--op', '{"blur":1}', '--bogus']), /unknown option '--bogus'/);
  assertOneLineError(await runCli(['edit', input, '-o', join(dir, 'no', 'such', 'dir.png'), '--op', '{"blur":1}']), /cannot write .*: no such file or directory/);
  const notImage = join(dir, 'notes.png');
  await writeFile(notImage, 'hello');
  assertOneLineError(await runCli(['edit', notImage, '-o', out, '--op', '{"blur":1}']), /unsupported_image/);
  const badOps = join(dir, 'bad-ops.json');
  await writeFile(badOps, '{"blur":1}');
  assertOneLineError(await runCli(['edit', input, '-o', out, '--ops', badOps]), /must hold a JSON array/);
});

test('with --json an error is also the API error body on stdout', async () => {
  const run = await runCli(['edit', input, '-o', join(dir, 'j.png'), '--op', '{"blur":-1}', '--json']);
  assert.is(run.code, 1);
  const body = JSON.parse(run.stdout);
  assert.is(body.error.code, 'invalid_operations');
  assert.is(body.error.path, 'operations[0].blur');
});

test('a solid image keeps its colour through a no-op edit (the pipeline, not a copy)', async () => {
  const red = join(dir, 'red.png');
  await writeFile(red, solid(8, 8, [255, 0, 0]));
  const out = join(dir, 'red-out.png');
  const run = await runCli(['edit', red, '-o', out, '--op', '{"brightness":1}']);
  assert.is(run.code, 0, run.stderr);
  assert.equal(pixel(await decode(await readFile(out)), 4, 4), [255, 0, 0, 255]);
});

test('- reads the image from stdin and writes the result to stdout; the summary only with --json, on stderr', async () => {
  const image = gradient(400, 300);
  const run = await runCli(['edit', '-', '-o', '-', '-f', 'webp', '--op', '{"resize":{"width":200}}'], { stdin: image });
  assert.is(run.code, 0, run.stderr);
  assert.is(run.stderr, '');
  assert.is(formatOf(run.stdoutBytes), 'webp');
  const out = await decode(run.stdoutBytes);
  assert.is(out.width, 200);
  assert.is(out.height, 150);

  const json = await runCli(['edit', '-', '-o', '-', '-f', 'png', '--op', '{"rotate":90}', '--json'], { stdin: image });
  assert.is(json.code, 0, json.stderr);
  assert.is(formatOf(json.stdoutBytes), 'png');
  const summary = JSON.parse(json.stderr);
  assert.equal([summary.width, summary.height, summary.output], [300, 400, '-']);

  // --ops from stdin with the image from a file.
  const ops = await runCli(['edit', input, '-o', join(dir, 'ops-stdin.png'), '--ops', '-'], { stdin: Buffer.from('[{"flip":"h"}]') });
  assert.is(ops.code, 0, ops.stderr);
  assert.is((await decode(await readFile(join(dir, 'ops-stdin.png')))).width, 400);
});

test('- misused: no format for stdout, stdin asked for twice, not an image on stdin: one clear line', async () => {
  assertOneLineError(await runCli(['edit', input, '-o', '-', '--op', '{"blur":1}']), /standard output \(-o -\) needs --format/);
  assertOneLineError(await runCli(['edit', '-', '-o', join(dir, 'x.png'), '--ops', '-'], { stdin: Buffer.from('[]') }), /standard input cannot hold both/);
  const run = await runCli(['edit', '-', '-o', '-', '-f', 'png', '--op', '{"blur":1}'], { stdin: Buffer.from('not an image') });
  assertOneLineError(run, /not a JPEG, PNG/);
  assert.is(run.stdoutBytes.length, 0);
});

test('several inputs or a folder: a batch into a folder, each result keeping its format unless --format', async () => {
  const photos = join(dir, 'batch-in');
  await mkdir(photos);
  await writeFile(join(photos, 'a.png'), gradient(40, 30));
  await writeFile(join(photos, 'b.jpg'), await convert(gradient(40, 30), 'jpeg'));
  await writeFile(join(photos, 'notes.txt'), 'not taken: not an image extension');
  const out = join(dir, 'batch-out');
  const run = await runCli(['edit', photos, '-o', `${out}/`, '--op', '{"rotate":90}']);
  assert.is(run.code, 0, run.stderr);
  assert.equal((await readdir(out)).sort(), ['a.png', 'b.jpg']);
  assert.is(formatOf(await readFile(join(out, 'b.jpg'))), 'jpeg');
  assert.equal([(await decode(await readFile(join(out, 'a.png')))).width], [30]);
  assert.match(lines(run.stdout).pop()!, /^2 files: 2 done, 0 failed in [\d.]+ s \(\d at a time\) -> /);

  const webp = join(dir, 'batch-webp');
  const both = await runCli(['edit', join(photos, 'a.png'), join(photos, 'b.jpg'), input, '-o', webp, '-f', 'webp', '--op', '{"blur":1}', '--json']);
  assert.is(both.code, 0, both.stderr);
  const summary = JSON.parse(both.stdout);
  assert.equal([summary.total, summary.done, summary.failed], [3, 3, 0]);
  assert.equal(summary.files.map((f: { output: string }) => f.output), ['a.webp', 'b.webp', 'in.webp'].map((name) => join(webp, name)));
  // a.png and a second a.* would write the same result: the second fails, exit code 1.
  await writeFile(join(photos, 'a.webp'), await convert(gradient(40, 30), 'webp'));
  const clash = await runCli(['edit', photos, '-o', join(dir, 'batch-clash'), '-f', 'png', '--op', '{"blur":1}']);
  assert.is(clash.code, 1, clash.stderr);
  assert.match(clash.stderr, /a\.webp: its result .*a\.png would overwrite the result of .*a\.png/);
  // --format auto and a background image in a batch: each result named after the format it took.
  const staged = join(dir, 'batch-auto');
  const backdrop = join(dir, 'batch-backdrop.png');
  await writeFile(backdrop, gradient(80, 60));
  const auto = await runCli(['edit', join(photos, 'a.png'), join(photos, 'b.jpg'), '-o', `${staged}/`, '-f', 'auto', '--background-image', backdrop, '--op', '{"backgroundImage":true}']);
  assert.is(auto.code, 0, auto.stderr);
  assert.equal((await readdir(staged)).sort(), ['a.jpg', 'b.jpg']);
  assert.is(formatOf(await readFile(join(staged, 'a.jpg'))), 'jpeg');
});

test('--background-image and --format auto: the extension the job chose is added to -o', async () => {
  const cutout = join(dir, 'cutout.png');
  await writeFile(cutout, solid(40, 30, [200, 10, 10, 128]));
  const backdrop = join(dir, 'backdrop.png');
  await writeFile(backdrop, gradient(80, 60));
  const run = await runCli(['edit', cutout, '-o', join(dir, 'staged'), '-f', 'auto', '--background-image', backdrop, '--op', '{"backgroundImage":true}', '--json']);
  assert.is(run.code, 0, run.stderr);
  const summary = JSON.parse(run.stdout);
  assert.is(summary.format, 'jpeg');
  assert.is(summary.output, join(dir, 'staged.jpg'));
  assert.is(formatOf(await readFile(join(dir, 'staged.jpg'))), 'jpeg');
  const transparent = await runCli(['edit', cutout, '-o', join(dir, 'still'), '-f', 'auto', '--op', '{"flip":"h"}']);
  assert.is(transparent.code, 0, transparent.stderr);
  assert.is(formatOf(await readFile(join(dir, 'still.png'))), 'png');
  assertOneLineError(await runCli(['edit', cutout, '-o', join(dir, 'x.png'), '-f', 'auto', '--op', '{"flip":"h"}']), /without an image extension/);
  assertOneLineError(await runCli(['edit', cutout, '-o', join(dir, 'y.png'), '--op', '{"backgroundImage":true}']), /needs a background image/);
});

test.run();
