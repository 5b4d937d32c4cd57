// One process of test/install/beside.test.ts: loads the libraries in the order given on the
// command line (matte, sharp, ort = onnxruntime-node), then does real work in each and prints one
// JSON line with what it got. The parent checks the values and that stderr stayed clean.
import { readFile } from 'node:fs/promises';

const order = process.argv.slice(2);
const loaded: Record<string, any> = {};
for (const name of order) {
  if (name === 'matte') loaded.matte = await import('../../lib/index.js');
  else if (name === 'sharp') loaded.sharp = (await import('sharp')).default;
  else if (name === 'ort') loaded.ort = await import('onnxruntime-node');
  else throw new Error(`unknown library ${name}`);
}

const out: Record<string, unknown> = {};
const input = await readFile(process.env.BESIDE_INPUT!);

if (loaded.sharp) {
  // A resize and an encode through sharp's own libvips.
  const { data, info } = await loaded.sharp(input).resize(50).png().toBuffer({ resolveWithObject: true });
  const raw = await loaded.sharp(data).raw().toBuffer({ resolveWithObject: true });
  out.sharp = { width: info.width, height: info.height, centre: [...raw.data.subarray((25 * 50 + 25) * raw.info.channels, (25 * 50 + 25) * raw.info.channels + 3)] };
}
if (loaded.ort) {
  // An inference through onnxruntime-node's own libonnxruntime.so.1, on the u2netp file.
  const session = await loaded.ort.InferenceSession.create(process.env.BESIDE_MODEL!);
  const tensor = new loaded.ort.Tensor('float32', new Float32Array(3 * 320 * 320).fill(0.5), [1, 3, 320, 320]);
  const result = await session.run({ [session.inputNames[0]]: tensor });
  const first = result[session.outputNames[0]];
  out.ort = { dims: first.dims, finite: Array.from(first.data as Float32Array).every(Number.isFinite) };
}
if (loaded.matte) {
  const edited = await loaded.matte.edit(input, [{ resize: { width: 40 } }, { blur: 1 }], { format: 'avif' });
  const cutout = await loaded.matte.removeBackground(input, { format: 'png' });
  const pixels = await loaded.matte.edit(cutout.data, [{ resize: { width: 10, height: 10, fit: 'crop' } }], { format: 'png' });
  out.matte = {
    edit: { width: edited.width, height: edited.height, format: edited.format, bytes: edited.data.length },
    cutout: { width: cutout.width, height: cutout.height },
    cutoutPng: pixels.data.toString('base64'),
    versions: loaded.matte.versions(),
  };
}
console.log(JSON.stringify(out));
