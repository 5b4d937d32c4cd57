// run-tests: parallel
// matte in one process with sharp and with onnxruntime-node, in both orders, each order in its own
// process (test/install/beside-child.ts). Each library does real work after both are loaded; the
// outputs are checked and stderr must carry no GLib message. The mechanism (libvips modules kept
// out of the global symbol scope, ONNX Runtime renamed) is in docs/architecture.md.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { modelPath } from '../../lib/models.js';
import { decode, disc, pixel } from '../helpers/images.js';

const run = promisify(execFile);
const CHILD = fileURLToPath(new URL('./beside-child.js', import.meta.url));

let scratch = '';
let input = '';
test.before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'matte-beside-'));
  input = join(scratch, 'disc.png');
  // A red disc on white: sharp's centre pixel is red; the matte's centre is opaque, its corners clear.
  await writeFile(input, disc(200, 200, 60, [220, 30, 30], [255, 255, 255], { alpha: false }));
});
test.after(() => rm(scratch, { recursive: true, force: true }));

async function runOrder(order: string[]) {
  const { stdout, stderr } = await run(process.execPath, [CHILD, ...order], {
    env: { ...process.env, BESIDE_INPUT: input, BESIDE_MODEL: modelPath('u2netp') },
    timeout: 120_000,
  }).catch((err) => {
    throw new Error(`${order.join(' then ')}: exited with ${err.signal ?? err.code}\n${err.stderr}`);
  });
  assert.not.match(stderr, /GLib|CRITICAL|WARNING|symbol lookup error/i, `${order.join(' then ')} wrote to stderr: ${stderr}`);
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

async function checkMatte(out: any) {
  assert.equal(out.matte.edit, { width: 40, height: 40, format: 'avif', bytes: out.matte.edit.bytes });
  assert.ok(out.matte.edit.bytes > 50);
  assert.equal(out.matte.cutout, { width: 200, height: 200 });
  const small = await decode(Buffer.from(out.matte.cutoutPng, 'base64'));
  assert.ok(pixel(small, 5, 5)[3] > 200, 'the disc is kept');
  assert.ok(pixel(small, 0, 0)[3] < 60, 'the white corner is removed');
  // matte runs on its own ONNX Runtime (1.29) whichever addon came last: the OrtApi pointer of
  // ONNX Runtime's C++ header is not shared with onnxruntime-node's (hidden visibility).
  assert.match(out.matte.versions.onnxruntime, /^1\.29\./);
}

function checkSharp(out: any) {
  assert.is(out.sharp.width, 50);
  assert.is(out.sharp.height, 50);
  const [r, g, b] = out.sharp.centre;
  assert.ok(r > 200 && g < 60 && b < 60, `sharp's centre pixel is red: ${out.sharp.centre}`);
}

function checkOrt(out: any) {
  assert.equal(out.ort.dims.slice(-2), [320, 320]);
  assert.ok(out.ort.finite);
}

test('sharp, then matte: both work', async () => {
  const out = await runOrder(['sharp', 'matte']);
  checkSharp(out);
  await checkMatte(out);
});

test('matte, then sharp: both work (sharp used to crash with GLib-GObject criticals)', async () => {
  const out = await runOrder(['matte', 'sharp']);
  checkSharp(out);
  await checkMatte(out);
});

test('onnxruntime-node, then matte: both work, each on its own ONNX Runtime', async () => {
  const out = await runOrder(['ort', 'matte']);
  checkOrt(out);
  await checkMatte(out);
});

test('matte, then onnxruntime-node: both work', async () => {
  const out = await runOrder(['matte', 'ort']);
  checkOrt(out);
  await checkMatte(out);
});

test('all three, matte in the middle', async () => {
  const out = await runOrder(['sharp', 'matte', 'ort']);
  checkSharp(out);
  checkOrt(out);
  await checkMatte(out);
});

test.run();
