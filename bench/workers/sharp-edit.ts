// One edit pipeline done with sharp, the way a sharp user would write the same work, in a
// process of its own. Settings are matched to matte's where the tool lets us:
//   - libvips threads: sharp.concurrency(threads), the same as matte's per-job threads (sharp's
//     own default on glibc Linux is 1);
//   - the operation cache off (sharp.cache(false)), as matte's addon has it;
//   - encoders: jpeg/webp quality 80, png compression 6, avif quality 50 / effort 4 / 4:2:0
//     (libvips' heifsave defaults, which matte uses), gif defaults;
//   - EXIF orientation applied (autoOrient), as matte always does;
//   - brightness/contrast/saturation as the same linear maps in sRGB (linear, recomb), not
//     modulate(), which works in LCh and would be different (and slower) work.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp, { type OutputInfo } from 'sharp';
import { INPUTS, OUTPUTS, finish, memory, time, workerArgs, type WorkerArgs } from '../common.js';
import { EXTENSIONS, PIPELINES } from '../pipelines.js';

interface Args extends WorkerArgs {
  pipeline: string;
  warmup: number;
  runs: number;
  threads: number;
}

// The same matrix as native/steps/tone.cc: out = luma + s (in - luma), Rec. 709 weights.
function saturationMatrix(s: number): [[number, number, number], [number, number, number], [number, number, number]] {
  const lr = 0.2126, lg = 0.7152, lb = 0.0722;
  return [
    [lr + s * (1 - lr), lg * (1 - s), lb * (1 - s)],
    [lr * (1 - s), lg + s * (1 - lg), lb * (1 - s)],
    [lr * (1 - s), lg * (1 - s), lb + s * (1 - lb)],
  ];
}

type Job = (input: Buffer) => Promise<{ data: Buffer; info: OutputInfo }>;

const JOBS: Record<string, Job> = {
  P1: (input) =>
    sharp(input).autoOrient().resize(800, 600, { fit: 'cover' }).jpeg({ quality: 80 }).toBuffer({ resolveWithObject: true }),
  // contain (may enlarge, fits inside) is sharp's 'inside'; blur 10 is sigma 5 (docs/api.md, "Operations (edit)").
  P2: (input) =>
    sharp(input)
      .autoOrient()
      .resize(1600, 1600, { fit: 'inside' })
      .rotate(90)
      // sharp mirrors before it rotates, whatever the call order: a vertical flip before a 90 degree
      // turn is the horizontal flip after it that P2 asks for (checked: mean |diff| ~1.5 vs ~56).
      .flip()
      .blur(5)
      .linear(1.2, 0)
      .webp({ quality: 80 })
      .toBuffer({ resolveWithObject: true }),
  P3: (input) =>
    sharp(input)
      .autoOrient()
      .recomb(saturationMatrix(0.5))
      .linear(1.3, 128 - 128 * 1.3)
      .png({ compressionLevel: 6 })
      .toBuffer({ resolveWithObject: true }),
  // sharp runs trim before flatten inside one pipeline, whatever the call order (it then trims
  // on alpha, one pixel wider here), so background-then-trim takes two passes, via raw pixels.
  P4: async (input) => {
    const flat = await sharp(input).autoOrient().flatten({ background: '#ff0000' }).raw().toBuffer({ resolveWithObject: true });
    return sharp(flat.data, { raw: { width: flat.info.width, height: flat.info.height, channels: flat.info.channels } })
      .trim({ threshold: 10 })
      .avif({ quality: 50, effort: 4, chromaSubsampling: '4:2:0' })
      .toBuffer({ resolveWithObject: true });
  },
  P5: (input) =>
    sharp(input, { animated: true }).resize(100, 100, { fit: 'inside' }).gif().toBuffer({ resolveWithObject: true }),
};

async function main(): Promise<void> {
  const args = workerArgs<Args>();
  const spec = PIPELINES.find((p) => p.id === args.pipeline);
  const job = JOBS[args.pipeline];
  if (!spec || !job) throw new Error(`unknown pipeline ${args.pipeline}`);
  sharp.cache(false);
  sharp.concurrency(args.threads);
  const input = readFileSync(join(INPUTS, spec.input));
  const before = memory();
  let last: Awaited<ReturnType<Job>> | undefined;
  const timing = await time(async () => {
    last = await job(input);
  }, args.warmup, args.runs);
  const output = join(OUTPUTS, `sharp-${spec.id}.${EXTENSIONS[spec.format]}`);
  writeFileSync(output, last!.data);
  const info = last!.info;
  const frames = info.pages ?? 1;
  finish(args, {
    tool: 'sharp',
    pipeline: spec.id,
    versions: { sharp: sharp.versions.sharp, libvips: sharp.versions.vips },
    timing,
    output: {
      file: output,
      width: info.width,
      height: frames > 1 ? info.pageHeight ?? info.height / frames : info.height,
      frames,
      bytes: last!.data.length,
    },
    rssBeforeMB: before.rssMB,
    ...memory(),
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
