// run-tests: parallel
// ONNX Runtime is opened by the first model (native/matte/onnxruntime.h) and libheif by the first
// HEIF/AVIF (native/encode/libheif.h), not by `import`: a process that only edits GIFs, PNGs... never
// maps them. Each case is a real process loading the real library; what is mapped is read from its
// /proc/self/maps. Without ONNX Runtime beside the addon, editing still works and a model fails with
// a model_error that names the file.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { modelsDir } from '../../lib/models-dir.js';
import { scratchDir } from '../helpers/scratch.js';
import { decode, pixel } from '../helpers/images.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const LIB = join(ROOT, 'dist/lib/index.js');
const IMAGES = join(ROOT, 'dist/test/helpers/images.js');

let scratch = '';
scratchDir(test, 'matte-lazy-ort-', (path) => (scratch = path));

/** Runs `body` (module code with `matte`, `image` and `mapped()` in scope) in a new process; returns its last JSON line. */
async function inProcess(body: string, env: NodeJS.ProcessEnv = {}): Promise<any> {
  const script = `
    const { readFileSync } = await import('node:fs');
    const maps = () => readFileSync('/proc/self/maps', 'utf8');
    const mapped = () => maps().includes('libmatte-onnxruntime.so.1');
    const heif = () => maps().includes('libheif.so') || maps().includes('vips-heif.so');
    const matte = await import(${JSON.stringify(LIB)});
    const { disc } = await import(${JSON.stringify(IMAGES)});
    const image = disc(64, 64, 20, [220, 30, 30], [255, 255, 255], { alpha: false });
    ${body}`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, MATTE_MODELS_DIR: modelsDir(), ...env },
  });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

test('import and edit leave ONNX Runtime unmapped; the first model maps it', async () => {
  const out = await inProcess(`
    const atImport = mapped();
    const edited = await matte.edit(image, [{ resize: { width: 32 } }, { blur: 1 }], { format: 'gif' });
    const afterEdit = mapped();
    const cutout = await matte.removeBackground(image, { model: 'u2netp' });
    console.log(JSON.stringify({ atImport, afterEdit, afterModel: mapped(), edited: [edited.width, edited.height], cutout: [cutout.width, cutout.height], versions: matte.versions() }));`);
  assert.is(out.atImport, false, 'mapped at import');
  assert.is(out.afterEdit, false, 'mapped by an edit');
  assert.equal(out.edited, [32, 32]);
  assert.is(out.afterModel, true);
  assert.equal(out.cutout, [64, 64]);
  assert.match(out.versions.onnxruntime, /^1\.29\./);
});

test('libheif is loaded by the first AVIF encode, and by the first HEIF/AVIF decode', async () => {
  const encoded = await inProcess(`
    const atImport = heif();
    await matte.edit(image, [{ resize: { width: 32 } }], { format: 'gif' });
    const afterGif = heif();
    const avif = await matte.edit(image, [{ resize: { width: 32 } }], { format: 'avif' });
    console.log(JSON.stringify({ atImport, afterGif, after: heif(), avif: avif.data.toString('base64') }));`);
  assert.is(encoded.atImport, false, 'libheif mapped at import');
  assert.is(encoded.afterGif, false, 'libheif mapped by a gif edit');
  assert.is(encoded.after, true);
  // A new process whose first job decodes that AVIF: the decoder's module is loaded on demand.
  const input = join(scratch, 'first.avif');
  await writeFile(input, Buffer.from(encoded.avif, 'base64'));
  const decoded = await inProcess(`
    const before = heif();
    const png = await matte.edit(${JSON.stringify(input)}, [{ rotate: 90 }], { format: 'png' });
    console.log(JSON.stringify({ before, after: heif(), png: png.data.toString('base64') }));`);
  assert.is(decoded.before, false);
  assert.is(decoded.after, true);
  const png = await decode(Buffer.from(decoded.png, 'base64'));
  assert.is(png.width, 32);
  const [r, g, b] = pixel(png, 16, 16);
  assert.ok(r > 180 && g < 80 && b < 80, `the red disc's centre: ${[r, g, b]}`);
});

test('versions() opens ONNX Runtime to answer', async () => {
  const out = await inProcess(`const before = mapped(); const v = matte.versions(); console.log(JSON.stringify({ before, after: mapped(), v }));`);
  assert.is(out.before, false);
  assert.is(out.after, true);
  assert.match(out.v.onnxruntime, /^1\.29\./);
});

test('no ONNX Runtime beside the addon: edits work, a model fails with model_error naming the file', async () => {
  const dir = join(scratch, 'no-ort');
  await mkdir(dir, { recursive: true });
  // The addon this suite runs on (the ASan build under `npm run test:asan`), without its neighbour.
  await copyFile(process.env.MATTE_ADDON_PATH || join(ROOT, 'build/Release/matte.node'), join(dir, 'matte.node'));
  const out = await inProcess(
    `
    const edited = await matte.edit(image, [{ resize: { width: 16 } }], { format: 'png' });
    const failure = await matte.removeBackground(image, { model: 'u2netp' }).then(() => null, (e) => ({ name: e.name, code: e.code, message: e.message }));
    const again = await matte.removeBackground(image, { model: 'u2netp' }).then(() => null, (e) => e.code);
    console.log(JSON.stringify({ edited: edited.width, failure, again }));`,
    { MATTE_ADDON_PATH: join(dir, 'matte.node') },
  );
  assert.is(out.edited, 16);
  assert.is(out.failure.name, 'MatteError');
  assert.is(out.failure.code, 'model_error');
  assert.match(out.failure.message, /cannot load ONNX Runtime \(.*no-ort\/libmatte-onnxruntime\.so\.1\)/);
  assert.is(out.again, 'model_error');
});

test.run();
