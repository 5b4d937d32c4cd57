// `node dist/bench/composite-space.js`: which colour space backgroundImage blends a cut-out in
// (docs/api.md, "Extensions: staged cut-outs"; bench/README.md, "Staged cut-outs"). A reference is
// rendered as a camera sees it: scenes drawn at 4x4 samples a pixel in linear light (a subject with
// hair-thin strands over a background) and averaged per pixel, which is how light mixes at an edge.
// The same scene over another background is the truth a composite should give. matte cuts the
// photo out with the scene's exact matte (handed in through the matte cache, so the model plays no
// part) and the refinement's estimated foreground colours; the cut-out is then blended over the
// new background in sRGB and in linear light, and each is compared with the truth on the edge's
// pixels (0 < alpha < 255), where the two differ.
import { PNG } from 'pngjs';
import { edit, loadModel } from '../lib/index.js';
import { givenMatte } from '../test/helpers/given-matte.js';

type Rgb = [number, number, number];

const toLinear = (v: number) => {
  const c = v / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
};
const toSrgb = (l: number) => {
  const c = l <= 0.0031308 ? l * 12.92 : 1.055 * Math.max(0, l) ** (1 / 2.4) - 0.055;
  return Math.min(255, Math.max(0, c * 255));
};

const W = 320;
const H = 240;
const S = 4; // samples a side

/** Whether the sample at (x, y) of the fine grid is on the subject: a disc and thin strands (hair) around it. */
function coverage(seed: number): (x: number, y: number) => boolean {
  let state = seed;
  const random = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
  const cx = (W * S) / 2, cy = (H * S) / 2, r = 70 * S;
  const strands = Array.from({ length: 90 }, () => {
    const angle = random() * Math.PI * 2;
    return { angle, length: (15 + random() * 30) * S, width: 0.6 + random() * 2.2, bend: (random() - 0.5) * 0.01 };
  });
  return (x, y) => {
    const dx = x - cx, dy = y - cy, d = Math.hypot(dx, dy);
    if (d <= r) return true;
    if (d > r + 46 * S) return false;
    const angle = Math.atan2(dy, dx);
    for (const s of strands) {
      const along = d - r;
      if (along > s.length) continue;
      let diff = angle - (s.angle + s.bend * along);
      diff = Math.atan2(Math.sin(diff), Math.cos(diff));
      if (Math.abs(diff * d) <= s.width / 2) return true;
    }
    return false;
  };
}

interface Scene {
  name: string;
  subject: Rgb;
  under: Rgb;
  over: Rgb;
}

const SCENES: Scene[] = [
  { name: 'fair hair on a dark wall, onto white', subject: [232, 205, 150], under: [38, 36, 44], over: [246, 246, 246] },
  { name: 'fair hair on a dark wall, onto mid grey', subject: [232, 205, 150], under: [38, 36, 44], over: [128, 128, 128] },
  { name: 'dark hair on a white wall, onto night blue', subject: [52, 36, 26], under: [236, 236, 230], over: [20, 28, 60] },
  { name: 'dark hair on a white wall, onto saturated blue', subject: [52, 36, 26], under: [236, 236, 230], over: [30, 90, 220] },
  { name: 'red product on green, onto yellow', subject: [200, 30, 40], under: [40, 160, 60], over: [250, 220, 40] },
  { name: 'grey product on grey, onto black', subject: [150, 150, 150], under: [110, 110, 110], over: [0, 0, 0] },
];

/** The photo (8-bit sRGB), its exact matte, and the truth over the other background. */
function render(scene: Scene, seed: number) {
  const on = coverage(seed);
  const photo = Buffer.alloc(W * H * 3);
  const truth = Buffer.alloc(W * H * 3);
  const alpha = new Uint8Array(W * H);
  const f = scene.subject.map(toLinear), u = scene.under.map(toLinear), o = scene.over.map(toLinear);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      let n = 0;
      for (let j = 0; j < S; j++) for (let i = 0; i < S; i++) if (on(x * S + i + 0.5, y * S + j + 0.5)) n++;
      const a = n / (S * S);
      alpha[y * W + x] = Math.round(a * 255);
      for (let c = 0; c < 3; c++) {
        photo[(y * W + x) * 3 + c] = Math.round(toSrgb(a * f[c]! + (1 - a) * u[c]!));
        truth[(y * W + x) * 3 + c] = Math.round(toSrgb(a * f[c]! + (1 - a) * o[c]!));
      }
    }
  }
  return { photo, alpha, truth };
}

function png(rgb: Buffer): Buffer {
  const image = new PNG({ width: W, height: H, colorType: 2 });
  for (let i = 0; i < W * H; i++) {
    image.data[i * 4] = rgb[i * 3]!;
    image.data[i * 4 + 1] = rgb[i * 3 + 1]!;
    image.data[i * 4 + 2] = rgb[i * 3 + 2]!;
    image.data[i * 4 + 3] = 255;
  }
  return PNG.sync.write(image, { colorType: 2 });
}

/** Mean and largest |composite - truth| over the edge's samples, in levels of 255. */
function errors(cutout: Buffer, truth: Buffer, over: Rgb, linear: boolean): { mean: number; max: number } {
  let sum = 0, n = 0, max = 0;
  for (let i = 0; i < W * H; i++) {
    const a = cutout[i * 4 + 3]!;
    if (a === 0 || a === 255) continue;
    for (let c = 0; c < 3; c++) {
      const fg = cutout[i * 4 + c]!;
      const value = linear
        ? toSrgb((a / 255) * toLinear(fg) + (1 - a / 255) * toLinear(over[c]!))
        : (a / 255) * fg + (1 - a / 255) * over[c]!;
      const e = Math.abs(value - truth[i * 3 + c]!);
      sum += e;
      n++;
      max = Math.max(max, e);
    }
  }
  return { mean: sum / n, max };
}

/** matte's composite (RGBA, opaque) against the truth on the edge, and its largest difference from the linear blend computed here. */
function nativeErrors(staged: Buffer, cutout: Buffer, truth: Buffer, over: Rgb): { truth: { mean: number; max: number }; fromBlend: number } {
  let sum = 0, n = 0, max = 0, fromBlend = 0;
  for (let i = 0; i < W * H; i++) {
    const a = cutout[i * 4 + 3]!;
    for (let c = 0; c < 3; c++) {
      const blend = toSrgb((a / 255) * toLinear(cutout[i * 4 + c]!) + (1 - a / 255) * toLinear(over[c]!));
      fromBlend = Math.max(fromBlend, Math.abs(staged[i * 4 + c]! - blend));
      if (a === 0 || a === 255) continue;
      const e = Math.abs(staged[i * 4 + c]! - truth[i * 3 + c]!);
      sum += e;
      n++;
      max = Math.max(max, e);
    }
  }
  return { truth: { mean: sum / n, max }, fromBlend };
}

async function main(): Promise<void> {
  await loadModel(); // removeBackground needs one loaded; the matte handed in replaces its output
  const rows: string[] = [];
  const totals = { srgb: 0, linear: 0, plainSrgb: 0, plainLinear: 0 };
  for (const [index, scene] of SCENES.entries()) {
    const { photo, alpha, truth } = render(scene, 7 + index);
    const input = png(photo);
    const cut = async (refine: boolean) => {
      const cache = givenMatte(alpha, W, H);
      const result = await edit(input, [{ removeBackground: { refine } }], { format: 'png', matteCache: cache, timeout: 0 });
      if (!cache.outcomes.includes('hit')) throw new Error('the matte was not handed in');
      const decoded = PNG.sync.read(result.data);
      return decoded.data;
    };
    const refined = await cut(true);
    // matte's own backgroundImage, over a plain image of the new background: it must be the linear blend above.
    const cache = givenMatte(alpha, W, H);
    const background = png(Buffer.from(Array.from({ length: W * H }, () => scene.over).flat()));
    const staged = PNG.sync.read((await edit(input, [{ removeBackground: true }, { backgroundImage: true }], { format: 'png', matteCache: cache, backgroundImage: background, timeout: 0 })).data).data;
    const own = nativeErrors(staged, refined, truth, scene.over);
    const plain = await cut(false);
    const srgb = errors(refined, truth, scene.over, false);
    const linear = errors(refined, truth, scene.over, true);
    const plainSrgb = errors(plain, truth, scene.over, false);
    const plainLinear = errors(plain, truth, scene.over, true);
    totals.srgb += srgb.mean / SCENES.length;
    totals.linear += linear.mean / SCENES.length;
    totals.plainSrgb += plainSrgb.mean / SCENES.length;
    totals.plainLinear += plainLinear.mean / SCENES.length;
    const f = (e: { mean: number; max: number }) => `${e.mean.toFixed(2)} (max ${e.max.toFixed(0)})`;
    rows.push(`| ${scene.name} | ${f(srgb)} | ${f(linear)} | ${f(plainSrgb)} | ${f(plainLinear)} | ${f(own.truth)}, ${own.fromBlend.toFixed(0)} |`);
  }
  console.log('| scene | refined colours, sRGB blend | refined colours, linear blend | photo colours (refine off), sRGB | photo colours, linear | matte backgroundImage; max from the linear blend |');
  console.log('|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  console.log(`| mean | ${totals.srgb.toFixed(2)} | ${totals.linear.toFixed(2)} | ${totals.plainSrgb.toFixed(2)} | ${totals.plainLinear.toFixed(2)} |`);
  console.log('\nmean |composite - truth| over the edge pixels (0 < alpha < 255), in levels of 255');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
