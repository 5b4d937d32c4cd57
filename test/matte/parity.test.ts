// run-tests: parallel
// Parity: the matte the addon makes with `refine: false` (the alpha of removeBackground's output on
// lenna.png; refinement and cleanup are measured by bench/quality instead) against
// a reference computed without the addon, in a child process (test/helpers/reference-matte.ts:
// sharp + onnxruntime-node + the registry entry's normalisation and post-processing).
//
// Two references per model:
// - "same model input": the reference is given the addon's own lanczos3 model-size image (made by
//   an edit resize, which is the same libvips call as the step's) and does everything after it
//   itself: normalisation, inference, post-processing, the linear resize back to full size. This
//   isolates what matte's code does from the resize implementation: <= 2/255.
// - "independent": the reference also resizes with sharp (its own libvips 8.18). The addon's
//   lanczos3 downscale of RGB is its own (native/resample/), computed as libvips' 12-bit path:
//   on lenna it gives sharp's model input exactly (checked within rounding below), so both bounds
//   are 2/255. With libvips 8.14's resize (6-bit vertical pass) the inputs differed by rounding
//   (mean 0.16 levels, at most 4), which u2netp amplified to 3.7/255.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { edit, loadModel, modelRegistry, removeBackground } from '../../lib/index.js';
import { modelPath } from '../../lib/models.js';
import { decode } from '../helpers/images.js';
import { fixture } from '../helpers/fixtures.js';
import { uninstrumentedEnv } from '../helpers/uninstrumented-env.js';

const run = promisify(execFile);
const REFERENCE = fileURLToPath(new URL('../helpers/reference-matte.js', import.meta.url));

let scratch = '';
let lenna = '';

test.before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'matte-parity-'));
  lenna = await fixture('lenna.png');
});
test.after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** The reference matte (1 byte a pixel, full size) from the child process. */
async function reference(name: string, image: string, small?: string): Promise<Buffer> {
  const entry = (await modelRegistry()).models[name]!;
  const entryFile = join(scratch, `${name}.json`);
  await writeFile(entryFile, JSON.stringify(entry));
  const out = join(scratch, `${name}-${small ? 'same' : 'independent'}.raw`);
  const args = [REFERENCE, entryFile, modelPath(name), image, out];
  if (small) args.push(small);
  await run(process.execPath, args, { maxBuffer: 1 << 20, env: uninstrumentedEnv() });
  return readFile(out);
}

function meanAbsoluteDifference(a: Buffer, b: Buffer, stride = 1, offset = 0): number {
  let sum = 0;
  for (let i = 0; i < b.length; i++) sum += Math.abs(a[i * stride + offset]! - b[i]!);
  return sum / b.length;
}

// Each model's matte and model input are made once and compared with both references.
function once<T>(make: (name: string) => Promise<T>): (name: string) => Promise<T> {
  const made = new Map<string, Promise<T>>();
  return (name) => {
    if (!made.has(name)) made.set(name, make(name));
    return made.get(name)!;
  };
}

const addonMatte = once(async (name: string): Promise<{ alpha: Buffer; width: number; height: number }> => {
  await loadModel(name, { threads: 2 });
  // refine: false is the model alone, the path that must match the plain onnxruntime pipeline.
  const out = await removeBackground(lenna, { refine: false });
  const decoded = await decode(out.data);
  assert.ok(decoded.hasAlpha);
  const alpha = Buffer.alloc(decoded.width * decoded.height);
  for (let i = 0; i < alpha.length; i++) alpha[i] = decoded.data[i * 4 + 3]!;
  return { alpha, width: decoded.width, height: decoded.height };
});

// The model-size image exactly as the step makes it: lenna has no alpha, so an edit resize is the
// same lanczos3 call on the same pixels. Saved as PNG (lossless).
const addonModelInput = once(async (name: string): Promise<string> => {
  const { width, height } = (await modelRegistry()).models[name]!.input;
  const out = await edit(lenna, [{ resize: { width, height, fit: 'cover' } }], { format: 'png' });
  assert.is(out.width, width);
  assert.is(out.height, height);
  const path = join(scratch, `${name}-input.png`);
  await writeFile(path, out.data);
  return path;
});

const bounds: Record<string, number> = { u2netp: 2, isnet: 2 };

for (const name of ['u2netp', 'isnet']) {
  const present = existsSync(modelPath(name));
  const define = present ? test : test.skip;

  define(`${name}: the addon's matte on lenna.png matches the reference from the same model input (MAD <= 2/255)`, async () => {
    const mine = await addonMatte(name);
    assert.is(mine.width, 512);
    assert.is(mine.height, 512);
    const ref = await reference(name, lenna, await addonModelInput(name));
    assert.is(ref.length, 512 * 512);
    const mad = meanAbsoluteDifference(mine.alpha, ref);
    console.log(`  ${name} same-input MAD ${mad.toFixed(4)}/255`);
    assert.ok(mad <= 2, `MAD ${mad} > 2`);
    // A real matte, not a constant: both background and subject are there.
    const transparent = ref.filter((v) => v < 16).length / ref.length;
    const subject = ref.filter((v) => v > 128).length / ref.length;
    assert.ok(transparent > 0.1 && subject > 0.05, `transparent ${transparent}, subject ${subject}`);
  });

  define(`${name}: the addon's matte on lenna.png matches the fully independent sharp reference (MAD <= ${bounds[name]}/255)`, async () => {
    const mine = await addonMatte(name);
    const ref = await reference(name, lenna);
    const mad = meanAbsoluteDifference(mine.alpha, ref);
    console.log(`  ${name} independent MAD ${mad.toFixed(4)}/255`);
    assert.ok(mad <= bounds[name]!, `MAD ${mad} > ${bounds[name]}`);
  });
}

test('the step resizes with lanczos3: its model input is within rounding of sharp lanczos3', async () => {
  const small = await addonModelInput('u2netp');
  // Compared in a child process too (sharp never loads beside the addon).
  const script = `
    const sharp = require('sharp');
    (async () => {
      const a = await sharp(process.argv[1]).resize(320, 320, { fit: 'fill', kernel: 'lanczos3' }).raw().toBuffer();
      const b = await sharp(process.argv[2]).removeAlpha().raw().toBuffer();
      let sum = 0, max = 0;
      for (let i = 0; i < a.length; i++) { const d = Math.abs(a[i] - b[i]); sum += d; max = Math.max(max, d); }
      console.log(JSON.stringify({ mad: sum / a.length, max }));
    })();`;
  const { stdout } = await run(process.execPath, ['-e', script, lenna, small], { cwd: fileURLToPath(new URL('../../../', import.meta.url)), env: uninstrumentedEnv() });
  const { mad, max } = JSON.parse(stdout) as { mad: number; max: number };
  assert.ok(mad < 0.5, `MAD ${mad}`);
  assert.ok(max <= 6, `max ${max}`);
});

test.run();
