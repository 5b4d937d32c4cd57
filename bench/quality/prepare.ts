// Makes the quality composites of bench/quality/recipe.json: each photographic cut-out (real
// transparency) over a real photograph, with the cut-out's own alpha as the exact ground truth.
// The sources come from Debian packages (apt-get download of the exact version, dpkg-deb -x);
// every source file and every generated file is checked against bench/quality/checksums.json.
//
//   node dist/bench/quality/prepare.js                    # verify-or-make bench/quality/data/
//   node dist/bench/quality/prepare.js --write-checksums  # (re)record the checksums after a recipe change
//   node dist/bench/quality/prepare.js --set=small        # the small-subject set (recipe.json smallSubjects)
//
// sharp composes; this process never loads matte's addon (score.ts does, in its own process).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { DATA_DIR, readRecipe, compositeName, compositeSet, type CompositeSet, type Recipe } from './recipe.js';
import { prng } from '../common.js';

const write = process.argv.includes('--write-checksums');
const set: CompositeSet = process.argv.includes('--set=small') ? 'small' : 'main';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

function extract(recipe: Recipe): Record<string, string> {
  const roots: Record<string, string> = {};
  const debs = join(DATA_DIR, 'debs');
  mkdirSync(debs, { recursive: true });
  for (const pkg of recipe.packages) {
    const dir = join(DATA_DIR, 'src', pkg.name);
    if (!existsSync(join(dir, pkg.root))) {
      const file = () => readdirSync(debs).find((f) => f.startsWith(`${pkg.name}_`) && f.endsWith('.deb'));
      if (!file()) {
        console.log(`quality: apt-get download ${pkg.name}=${pkg.version}`);
        execFileSync('apt-get', ['download', `${pkg.name}=${pkg.version}`], { cwd: debs, stdio: 'inherit' });
      }
      mkdirSync(dir, { recursive: true });
      execFileSync('dpkg-deb', ['-x', join(debs, file()!), dir]);
    }
    roots[pkg.name] = join(dir, pkg.root);
  }
  return roots;
}

async function main(): Promise<void> {
  const recipe = readRecipe();
  const roots = extract(recipe);
  const { params, dir: out, checksums: CHECKSUMS } = compositeSet(recipe, set);
  const known: Record<string, string> = existsSync(CHECKSUMS) ? JSON.parse(readFileSync(CHECKSUMS, 'utf8')) : {};
  const seen: Record<string, string> = {};
  const check = (key: string, data: Buffer) => {
    const digest = sha256(data);
    seen[key] = digest;
    if (!write && known[key] !== digest) {
      throw new Error(`${key}: sha256 ${digest}, checksums.json has ${known[key] ?? 'nothing'} (run with --write-checksums only after a deliberate recipe change)`);
    }
  };
  const [stamps, templates] = recipe.packages.map((p) => roots[p.name]!);
  const random = prng(params.seed);
  mkdirSync(out, { recursive: true });

  for (const [index, cutout] of recipe.cutouts.entries()) {
    const background = recipe.backgrounds[index % recipe.backgrounds.length]!;
    const fgBytes = readFileSync(join(stamps!, cutout));
    const bgBytes = readFileSync(join(templates!, background));
    check(`source:${cutout}`, fgBytes);
    check(`source:${background}`, bgBytes);

    let fg = await sharp(fgBytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    // The subject takes `subjectShare` of the canvas's longer side; the canvas has the background's
    // aspect ratio (the photo is cropped, never distorted). Past maxLongSide the cut-out is scaled
    // down instead (sharp resizes premultiplied: the truth is the scaled cut-out).
    const longest = Math.max(fg.info.width, fg.info.height);
    if (params.maxLongSide && longest / params.subjectShare > params.maxLongSide) {
      const side = Math.round(params.maxLongSide * params.subjectShare);
      const size = fg.info.width >= fg.info.height ? { width: side } : { height: side };
      fg = await sharp(fgBytes).ensureAlpha().resize(size).raw().toBuffer({ resolveWithObject: true });
    }
    const fw = fg.info.width;
    const fh = fg.info.height;
    const bgMeta = await sharp(bgBytes).metadata();
    const aspect = bgMeta.width! / bgMeta.height!;
    let width = Math.max(params.minLongSide, Math.round(Math.max(fw, fh) / params.subjectShare));
    let height = Math.round(width / aspect);
    if (height < fh + 8 || width < fw + 8) {
      height = Math.max(height, fh + 16);
      width = Math.max(width, Math.round(height * aspect), fw + 16);
    }
    const bg = await sharp(bgBytes).resize(width, height, { fit: 'cover' }).removeAlpha().raw().toBuffer();
    const left = Math.floor(random() * (width - fw + 1));
    const top = Math.floor(random() * (height - fh + 1));

    // I = a F + (1 - a) B per channel, in the encoded (sRGB) values as matting datasets do.
    const image = Buffer.from(bg);
    const alpha = Buffer.alloc(width * height);
    // The true foreground colours where the subject is (black elsewhere): the composite score's truth.
    const foreground = Buffer.alloc(width * height * 3);
    for (let y = 0; y < fh; y++) {
      for (let x = 0; x < fw; x++) {
        const s = (y * fw + x) * 4;
        const a = fg.data[s + 3]!;
        const d = (top + y) * width + left + x;
        alpha[d] = a;
        for (let c = 0; c < 3; c++) foreground[d * 3 + c] = a ? fg.data[s + c]! : 0;
        for (let c = 0; c < 3; c++) {
          image[d * 3 + c] = Math.round((fg.data[s + c]! * a + bg[d * 3 + c]! * (255 - a)) / 255);
        }
      }
    }
    const name = compositeName(index, cutout);
    const png = await sharp(image, { raw: { width, height, channels: 3 } }).png({ compressionLevel: 6 }).toBuffer();
    const gt = await sharp(alpha, { raw: { width, height, channels: 1 } }).png({ compressionLevel: 6 }).toBuffer();
    check(`composite:${name}.png`, png);
    check(`alpha:${name}.png`, gt);
    const fgPng = await sharp(foreground, { raw: { width, height, channels: 3 } }).png({ compressionLevel: 6 }).toBuffer();
    check(`foreground:${name}.png`, fgPng);
    writeFileSync(join(out, `${name}.fg.png`), fgPng);
    writeFileSync(join(out, `${name}.png`), png);
    writeFileSync(join(out, `${name}.alpha.png`), gt);
  }

  if (set === 'main') {
    // The 12 MP timing input: the first report composite, scaled to 4000x3000 (JPEG q90, like a photo).
    const first = compositeName(1, recipe.cutouts[1]!);
    const big = await sharp(join(out, `${first}.png`)).resize(4000, 3000, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer();
    writeFileSync(join(DATA_DIR, 'timing-12mp.jpg'), big);
  }

  if (write) {
    writeFileSync(CHECKSUMS, JSON.stringify(seen, null, 1) + '\n');
    console.log(`quality: wrote ${Object.keys(seen).length} checksums to ${CHECKSUMS}`);
  }
  console.log(`quality: ${recipe.cutouts.length} composites in ${out}`);
}

main().catch((err) => {
  console.error(`quality: ${(err as Error).message}`);
  process.exit(1);
});
