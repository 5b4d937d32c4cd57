// Background removal the way a JS user would write it: onnxruntime-node + sharp. Resize to the
// model's input size, normalise as the registry entry says, run, rescale the output to a 0..255
// matte, resize it back to the image size, join it as alpha, encode png. Also times the model's
// bare inference (session.run on a ready tensor), which is the denominator of matte's
// "end-to-end / bare inference" figure.
//
// To compare like with like, the ONNX Runtime session gets matte's settings (native/matte/model.cc:
// `threads` intra-op threads, 1 inter-op, all graph optimisations, no memory pattern, no spinning)
// and the resize kernels are matte's (lanczos3 down to the model size, linear back up).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { INPUTS, OUTPUTS, finish, memory, time, workerArgs, type WorkerArgs } from '../common.js';
import { fromHalf, toHalf } from '../half.js';

interface Entry {
  input: { width: number; height: number; divide: number | 'max'; mean: number[]; std: number[] };
  output: { name: string; postprocess: 'minmax' | 'clamp' };
}

interface Args extends WorkerArgs {
  model: string;
  modelPath: string;
  entry: Entry;
  input: string;
  warmup: number;
  runs: number;
  threads: number;
  /** ONNX Runtime's CPU memory arena (default on, as onnxruntime-node has it). */
  arena?: boolean;
  /** A W x H image made by matte from the same input (square inputs only), see below. */
  controlInput?: string;
}

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  const { entry } = args;
  sharp.cache(false);
  sharp.concurrency(args.threads);
  const loadStart = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(args.modelPath, {
    intraOpNumThreads: args.threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    enableMemPattern: false,
    enableCpuMemArena: args.arena ?? true,
    executionMode: 'sequential',
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  });
  const loadMs = Number(process.hrtime.bigint() - loadStart) / 1e6;
  const inputName = session.inputNames[0]!;
  const inputHalf = (session.inputMetadata?.[0] as { type?: string } | undefined)?.type === 'float16';
  const W = entry.input.width;
  const H = entry.input.height;
  const pixels = W * H;

  const makeTensor = (rgb: Buffer): ort.Tensor => {
    let divide = entry.input.divide === 'max' ? 0 : entry.input.divide;
    if (!divide) {
      let max = 1;
      for (let i = 0; i < rgb.length; i++) if (rgb[i]! > max) max = rgb[i]!;
      divide = max;
    }
    const chw = new Float32Array(pixels * 3);
    for (let c = 0; c < 3; c++) {
      const scale = 1 / (divide * entry.input.std[c]!);
      const offset = -entry.input.mean[c]! / entry.input.std[c]!;
      for (let i = 0; i < pixels; i++) chw[c * pixels + i] = rgb[i * 3 + c]! * scale + offset;
    }
    if (!inputHalf) return new ort.Tensor('float32', chw, [1, 3, H, W]);
    const half = new Uint16Array(chw.length);
    for (let i = 0; i < chw.length; i++) half[i] = toHalf(chw[i]!);
    return new ort.Tensor('float16', half, [1, 3, H, W]);
  };

  const toMatte = (output: ort.Tensor): Buffer => {
    const raw = output.data as Float32Array | Uint16Array;
    const values = new Float32Array(pixels);
    if (output.type === 'float16') for (let i = 0; i < pixels; i++) values[i] = fromHalf((raw as Uint16Array)[i]!);
    else values.set((raw as Float32Array).subarray(0, pixels));
    let low = 0;
    let high = 1;
    if (entry.output.postprocess === 'minmax') {
      low = Infinity;
      high = -Infinity;
      for (const v of values) {
        if (v < low) low = v;
        if (v > high) high = v;
      }
      if (!(high > low)) high = low + 1;
    }
    const matte = Buffer.alloc(pixels);
    const scale = 255 / (high - low);
    for (let i = 0; i < pixels; i++) matte[i] = Math.round(Math.min(255, Math.max(0, (values[i]! - low) * scale)));
    return matte;
  };

  // Model input (W x H RGB) -> full-size 8-bit matte.
  const alphaFor = async (small: Buffer, width: number, height: number): Promise<Buffer> => {
    const result = await session.run({ [inputName]: makeTensor(small) }, [entry.output.name]);
    const matte = toMatte(result[entry.output.name]!);
    return sharp(matte, { raw: { width: W, height: H, channels: 1 } })
      .resize(width, height, { fit: 'fill', kernel: 'linear' })
      .extractChannel(0) // sharp would otherwise hand back 3 bands
      .raw()
      .toBuffer();
  };

  const input = readFileSync(join(INPUTS, args.input));
  const before = memory();

  // The JS pipeline, end to end.
  const pipeline = async (): Promise<{ data: Buffer; width: number; height: number }> => {
    const meta = await sharp(input).metadata();
    const [width, height] = (meta.orientation ?? 1) >= 5 ? [meta.height!, meta.width!] : [meta.width!, meta.height!];
    // sharp applies removeAlpha after joinChannel, so an input with alpha is first made RGB.
    const image = meta.hasAlpha
      ? sharp(await sharp(input).autoOrient().removeAlpha().raw().toBuffer(), { raw: { width, height, channels: 3 } })
      : sharp(input).autoOrient();
    const small = await image.clone().resize(W, H, { fit: 'fill', kernel: 'lanczos3' }).raw().toBuffer();
    const alpha = await alphaFor(small, width, height);
    const data = await image.joinChannel(alpha, { raw: { width, height, channels: 1 } }).png({ compressionLevel: 6 }).toBuffer();
    return { data, width, height };
  };
  let last: Awaited<ReturnType<typeof pipeline>> | undefined;
  const timing = await time(async () => {
    last = await pipeline();
  }, args.warmup, args.runs);

  // The model alone: session.run on a tensor made once.
  const small = await sharp(input).autoOrient().removeAlpha().resize(W, H, { fit: 'fill', kernel: 'lanczos3' }).raw().toBuffer();
  const tensor = makeTensor(small);
  const inference = await time(() => session.run({ [inputName]: tensor }, [entry.output.name]), 1, Math.max(args.runs, 7));

  const after = memory(); // the control below is not part of the measurement
  const output = join(OUTPUTS, `js-bg-${args.model}-${args.input.replace(/\.\w+$/, '')}.png`);
  writeFileSync(output, last!.data);

  // Control: the same pipeline fed with matte's own model-size image (libvips 8.14's resize, made
  // by the matte-bg worker), so that a difference of the mattes can be told apart from a
  // difference of the two libvips' resamplers, to which the model is sensitive.
  let control: string | undefined;
  if (args.controlInput && existsSync(args.controlInput)) {
    const small = await sharp(args.controlInput).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    if (small.info.width === W && small.info.height === H) {
      const alpha = await alphaFor(small.data, last!.width, last!.height);
      control = join(OUTPUTS, `js-bg-control-${args.model}-${args.input.replace(/\.\w+$/, '')}.png`);
      await sharp(alpha, { raw: { width: last!.width, height: last!.height, channels: 1 } }).toColourspace('b-w').png().toFile(control);
    }
  }
  finish(args, {
    tool: 'js',
    model: args.model,
    input: args.input,
    versions: { onnxruntime: ort.env.versions?.common ?? 'unknown', sharp: sharp.versions.sharp },
    loadMs,
    timing,
    inference,
    output: { file: output, width: last!.width, height: last!.height, bytes: last!.data.length },
    control,
    rssBeforeMB: before.rssMB,
    ...after,
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

