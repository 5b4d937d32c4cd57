// The reference matte for the parity tests, computed independently of the addon: sharp (its own
// libvips) for the resizes, onnxruntime-node for the inference, and the registry entry's
// normalisation and post-processing written out again here in plain JS.
//
//   node dist/test/helpers/reference-matte.js <entry.json> <model.onnx> <image> <out.raw> [<small>]
//
// <small>, when given, is the image already stretched to the model's input size (the parity test
// passes the addon's own, to compare everything but the resize implementation).
//
// Writes the 1-band 8-bit matte at the image's full size to out.raw and prints {width, height}.
// It runs in a child process only: sharp and onnxruntime-node must never share a process with the
// addon (two libvips in one process crash; two libonnxruntime.so.1 clash by SONAME). So this file
// imports nothing from lib/.
import { readFile, writeFile } from 'node:fs/promises';
import sharp from 'sharp';
import * as ort from 'onnxruntime-node';

interface Entry {
  input: { width: number; height: number; divide: number | 'max'; mean: number[]; std: number[] };
  output: { name: string; postprocess: 'minmax' | 'clamp' };
}

async function main(): Promise<void> {
  const [entryPath, modelPath, imagePath, outPath, smallPath] = process.argv.slice(2);
  if (!entryPath || !modelPath || !imagePath || !outPath) throw new Error('usage: reference-matte <entry.json> <model> <image> <out.raw>');
  const entry = JSON.parse(await readFile(entryPath, 'utf8')) as Entry;
  const { width: W, height: H } = entry.input;

  // 1. The image as 8-bit sRGB without alpha, stretched to the model's size with lanczos3.
  const meta = await sharp(imagePath).metadata();
  const fullWidth = meta.width!, fullHeight = meta.height!;
  const small = smallPath
    ? await sharp(smallPath).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true })
    : await sharp(imagePath).removeAlpha().toColourspace('srgb').resize(W, H, { fit: 'fill', kernel: 'lanczos3' }).raw().toBuffer({ resolveWithObject: true });
  if (small.info.channels !== 3 || small.info.width !== W || small.info.height !== H) throw new Error('unexpected resize result');

  // 2. Planar float: x' = (x / divide - mean) / std, divide "max" being the largest value.
  const rgb = small.data;
  let divide = entry.input.divide;
  if (divide === 'max') {
    divide = 1;
    for (const v of rgb) divide = Math.max(divide, v);
  }
  const plane = W * H;
  const chw = new Float32Array(3 * plane);
  for (let i = 0; i < plane; i++)
    for (let c = 0; c < 3; c++) chw[c * plane + i] = (rgb[i * 3 + c]! / divide - entry.input.mean[c]!) / entry.input.std[c]!;

  // 3. Inference; only the matte output.
  const session = await ort.InferenceSession.create(modelPath, { intraOpNumThreads: 2 });
  const inputName = session.inputNames[0]!;
  const results = await session.run({ [inputName]: new ort.Tensor('float32', chw, [1, 3, H, W]) }, [entry.output.name]);
  const values = results[entry.output.name]!.data as Float32Array;

  // 4. Post-processing to 0..255.
  let low = 0, high = 1;
  if (entry.output.postprocess === 'minmax') {
    low = Infinity;
    high = -Infinity;
    for (let i = 0; i < plane; i++) {
      low = Math.min(low, values[i]!);
      high = Math.max(high, values[i]!);
    }
    if (!(high > low)) high = low + 1;
  }
  const matte = Buffer.alloc(plane);
  for (let i = 0; i < plane; i++) matte[i] = Math.round(Math.min(255, Math.max(0, ((values[i]! - low) * 255) / (high - low))));

  // 5. Back to the full size with a linear kernel. A 1-band raw buffer must be told it is b-w, or
  // sharp makes it 3-band sRGB.
  const full = await sharp(matte, { raw: { width: W, height: H, channels: 1 } })
    .resize(fullWidth, fullHeight, { fit: 'fill', kernel: 'linear' })
    .toColourspace('b-w')
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (full.info.channels !== 1) throw new Error(`the reference matte has ${full.info.channels} bands`);
  await writeFile(outPath, full.data);
  process.stdout.write(JSON.stringify({ width: full.info.width, height: full.info.height }) + '\n');
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
