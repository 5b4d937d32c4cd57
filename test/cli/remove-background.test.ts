// run-tests: parallel
// `matte remove-background` run as a real process on real files: many files in parallel, the
// mattes' pixels, --trim/--format, a directory as input, failures named with their reasons
// (exit code 1, the others still done), no overwrite without --force, plain lines off a terminal.
import { readdir, readFile, writeFile, mkdir, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { lines, MATTE_BIN, runCli } from '../helpers/cli.js';
import { decode, disc, formatOf, pixel } from '../helpers/images.js';
import { tempDir } from '../helpers/server.js';

const RED: [number, number, number] = [200, 30, 30];
const WHITE: [number, number, number] = [255, 255, 255];
let dir: string;
let inputs: string[];

test.before(async () => {
  dir = await tempDir('matte-cli-rb-');
  await mkdir(join(dir, 'photos'));
  inputs = [];
  for (const [name, w, h] of [['a', 320, 240], ['b', 200, 200], ['c', 240, 320]] as const) {
    const path = join(dir, 'photos', `${name}.png`);
    await writeFile(path, disc(w, h, Math.min(w, h) / 4, RED, WHITE, { alpha: false }));
    inputs.push(path);
  }
});

function assertMatted(image: { width: number; height: number; data: Buffer }, label: string): void {
  const w = image.width, h = image.height;
  assert.ok(pixel(image as never, 0, 0)[3] < 10, `${label}: corner alpha`);
  assert.ok(pixel(image as never, w >> 1, h >> 1)[3] > 245, `${label}: centre alpha`);
}

test('several files in parallel: each matted, a plain line each and a summary, exit 0', async () => {
  const out = join(dir, 'out1');
  const run = await runCli(['remove-background', ...inputs, '-o', out, '--jobs', '2']);
  assert.is(run.code, 0, run.stderr);
  const out_lines = lines(run.stdout);
  assert.is(out_lines.length, 4, run.stdout);
  for (const name of ['a', 'b', 'c']) assert.ok(out_lines.some((l) => l.includes(`${name}.png -> `)), `a line for ${name}`);
  assert.match(out_lines[3]!, /^3 files: 3 done, 0 failed in [\d.]+ s \(2 at a time\)/);
  assert.equal((await readdir(out)).sort(), ['a.png', 'b.png', 'c.png']);
  for (const name of ['a', 'b', 'c']) {
    const data = await readFile(join(out, `${name}.png`));
    assert.is(formatOf(data), 'png');
    assertMatted(await decode(data), name);
  }
  const b = await decode(await readFile(join(out, 'b.png')));
  assert.equal([b.width, b.height], [200, 200]);
});

test('a directory stands for its images; --format webp --trim; --json lists every file', async () => {
  const out = join(dir, 'out2');
  const run = await runCli(['remove-background', join(dir, 'photos'), '-o', out, '--format', 'webp', '--trim', '--json']);
  assert.is(run.code, 0, run.stderr);
  const report = JSON.parse(run.stdout);
  assert.is(report.total, 3);
  assert.is(report.done, 3);
  assert.is(report.failed, 0);
  assert.equal(report.files.map((f: { output: string }) => f.output), ['a', 'b', 'c'].map((n) => join(out, `${n}.webp`)));
  const a = await readFile(join(out, 'a.webp'));
  assert.is(formatOf(a), 'webp');
  const image = await decode(a);
  // Trimmed towards the disc (120 px across; the model's soft edge may add some): narrower than 320.
  assert.ok(image.width < 320 && image.width >= 118, `trimmed width ${image.width}`);
  assert.ok(image.height < 240, `trimmed height ${image.height}`);
  assert.is(report.files[0].width, image.width);
});

test('failures are named with their reasons, the rest is done, exit code 1; no overwrite without --force', async () => {
  const out = join(dir, 'out3');
  await mkdir(out);
  await writeFile(join(out, 'b.png'), 'keep me');
  const bad = join(dir, 'bad.png');
  await writeFile(bad, 'not an image');
  const missing = join(dir, 'missing.png');
  const run = await runCli(['rmbg', inputs[0]!, inputs[1]!, bad, missing, '-o', out]);
  assert.is(run.code, 1, 'ran to the end, some inputs failed');
  const errors = lines(run.stderr);
  assert.ok(errors.some((l) => l.includes(`failed ${missing}: no such file or directory`)), run.stderr);
  assert.ok(errors.some((l) => l.includes(`failed ${bad}`) && /not a JPEG, PNG/.test(l)), run.stderr);
  assert.ok(errors.some((l) => l.includes(`b.png already exists (use --force to overwrite)`)), run.stderr);
  assert.match(errors[errors.length - 1]!, /^4 files: 1 done, 3 failed/);
  assert.not.match(run.stderr, /\n\s+at /);
  assert.is(await readFile(join(out, 'b.png'), 'utf8'), 'keep me');
  assertMatted(await decode(await readFile(join(out, 'a.png'))), 'a');

  const forced = await runCli(['rmbg', inputs[1]!, '-o', out, '--force']);
  assert.is(forced.code, 0, forced.stderr);
  assertMatted(await decode(await readFile(join(out, 'b.png'))), 'b forced');
});

test('setup errors are one line: unknown model, a bad format, an unreadable directory, no -o', async () => {
  const out = join(dir, 'out4');
  const model = await runCli(['rmbg', inputs[0]!, '-o', out, '--model', 'nosuch']);
  assert.is(model.code, 1);
  assert.equal(lines(model.stderr).length, 1);
  assert.match(model.stderr, /^matte: unknown model "nosuch" \(registry: u2netp, isnet, u2net, .*birefnet-general, .*\) \(model_error\)\n$/);
  const format = await runCli(['rmbg', inputs[0]!, '-o', out, '--format', 'gif']);
  assert.is(format.code, 1);
  assert.equal(lines(format.stderr), ['matte: --format must be one of png, webp, jpeg, auto (got "gif")']);
  const noOut = await runCli(['rmbg', inputs[0]!]);
  assert.is(noOut.code, 1);
  assert.equal(lines(noOut.stderr), ["matte: required option '-o, --output <dir>' not specified"]);
  const fileAsDir = await runCli(['rmbg', inputs[0]!, '-o', inputs[1]!]);
  assert.is(fileAsDir.code, 1);
  assert.is(lines(fileAsDir.stderr).length, 1, fileAsDir.stderr);
  assert.match(fileAsDir.stderr, /output directory/);
  if (process.getuid?.() !== 0) {
    // (root reads everything, so this part only runs as another user)
    const locked = join(dir, 'locked');
    await mkdir(locked);
    await chmod(locked, 0);
    const run = await runCli(['rmbg', locked, '-o', out]);
    assert.is(run.code, 1);
    assert.match(run.stderr, /cannot read the directory: permission denied/);
  }
  const empty = join(dir, 'empty');
  await mkdir(empty);
  const none = await runCli(['rmbg', empty, '-o', out]);
  assert.is(none.code, 1);
  assert.equal(lines(none.stderr), [`matte: failed ${empty}: no image files in the directory`]);
});

test('--channels alpha writes the matte alone (greyscale PNG); --trim-margin grows the trimmed box exactly', async () => {
  const masks = join(dir, 'masks');
  const run = await runCli(['rmbg', inputs[0]!, '-o', masks, '--channels', 'alpha']);
  assert.is(run.code, 0, run.stderr);
  const mask = await readFile(join(masks, 'a.png'));
  assert.is(mask[25], 0, 'PNG colour type 0: greyscale without alpha');
  const trimmed = join(dir, 'trimmed'), margined = join(dir, 'margined');
  assert.is((await runCli(['rmbg', inputs[0]!, '-o', trimmed, '--trim'])).code, 0);
  const withMargin = await runCli(['rmbg', inputs[0]!, '-o', margined, '--trim', '--trim-margin', '20']);
  assert.is(withMargin.code, 0, withMargin.stderr);
  const a = await decode(await readFile(join(trimmed, 'a.png')));
  const b = await decode(await readFile(join(margined, 'a.png')));
  assert.equal([b.width, b.height], [a.width + 40, a.height + 40]);
  const noTrim = await runCli(['rmbg', inputs[0]!, '-o', join(dir, 'x'), '--trim-margin', '20']);
  assert.is(noTrim.code, 1);
  assert.match(noTrim.stderr, /--trim-margin needs --trim/);
  const bad = await runCli(['rmbg', inputs[0]!, '-o', join(dir, 'x'), '--trim', '--trim-margin', '60%']);
  assert.is(bad.code, 1);
  assert.match(bad.stderr, /--trim-margin must be/);
  const channels = await runCli(['rmbg', inputs[0]!, '-o', join(dir, 'x'), '--channels', 'rgb']);
  assert.is(channels.code, 1);
  assert.match(channels.stderr, /--channels must be one of rgba, alpha/);
});

test('on a terminal: a progress bar redrawn in place on stderr, failures above it', async () => {
  // `script` (util-linux) gives the command a pseudo-terminal.
  const out = join(dir, 'out5');
  const missing = join(dir, 'gone.png');
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(MATTE_BIN)} rmbg ${JSON.stringify(inputs[0])} ${JSON.stringify(missing)} -o ${JSON.stringify(out)}`;
  const run = await new Promise<{ code: number | null; text: string }>((resolve) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, COLUMNS: '100' } });
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.on('close', (code) => resolve({ code, text }));
  });
  assert.is(run.code, 1);
  assert.match(run.text, /\r\x1b\[K\[-+\] 0\/2/);
  assert.match(run.text, /\[#+\] 2\/2, 1 failed/);
  assert.match(run.text, new RegExp(`matte: failed ${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: no such file or directory`));
  assert.match(run.text, /2 files: 1 done, 1 failed/);
});

test('the staging flags: --size, --shadow, --place, --background-image and --format auto', async () => {
  const out = join(dir, 'staged');
  const backdrop = join(dir, 'backdrop.png');
  await writeFile(backdrop, disc(90, 60, 20, [20, 20, 200], WHITE, { alpha: false }));
  const run = await runCli(['remove-background', inputs[0]!, '-o', out, '--size', '0.02', '--shadow', '--place', '{"scale":80,"aspectRatio":"1:1"}', '--background-image', backdrop, '--format', 'auto', '--json']);
  assert.is(run.code, 0, run.stderr);
  const report = JSON.parse(run.stdout);
  assert.is(report.done, 1);
  assert.equal(await readdir(out), ['a.jpg']);
  const image = await decode(await readFile(join(out, 'a.jpg')));
  assert.ok(image.width === image.height && image.width * image.height <= 20_000, `${image.width}x${image.height}`);
  const hard = await runCli(['remove-background', inputs[1]!, '-o', join(dir, 'hard'), '--no-semitransparency', '--roi', '0,0,50%,100%']);
  assert.is(hard.code, 0, hard.stderr);
  const matte = await decode(await readFile(join(dir, 'hard', 'b.png')));
  for (let i = 0; i < matte.width * matte.height; i++) if (i % matte.width >= matte.width / 2) assert.is(matte.data[i * 4 + 3], 0);
  const bad = await runCli(['remove-background', inputs[1]!, '-o', join(dir, 'bad'), '--size', 'huge']);
  assert.is(bad.code, 1);
  assert.match(bad.stderr, /^matte: --size: must be one of preview/);
});

test.run();

