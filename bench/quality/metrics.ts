// The quality scores of one predicted matte against its ground truth (both 8-bit, same size).

export interface Scores {
  /** Intersection over union of alpha >= 128. */
  iou: number;
  /** Mean absolute error over every pixel, 0..255. */
  mae: number;
  /** Mean absolute error within `band` px of the true edge (and wherever the truth is partial), 0..255. */
  edgeMae: number;
}

/** Pixels within `radius` (Chebyshev distance) of the true 0.5 contour, plus every partial-alpha pixel. */
export function edgeBand(truth: Uint8Array, width: number, height: number, radius: number): Uint8Array {
  const edge = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      const inside = truth[i]! >= 128;
      const differs =
        (x + 1 < width && (truth[i + 1]! >= 128) !== inside) || (y + 1 < height && (truth[i + width]! >= 128) !== inside);
      if (differs) edge[i] = 1;
    }
  }
  // Separable dilation by a (2r+1)^2 square.
  const rows = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    let last = -Infinity;
    for (let x = 0; x < width; x++) if (edge[y * width + x]) { last = x; } else if (x - last <= radius) rows[y * width + x] = 1;
    for (let x = 0; x < width; x++) if (edge[y * width + x]) rows[y * width + x] = 1;
    let next = Infinity;
    for (let x = width - 1; x >= 0; x--) if (edge[y * width + x]) next = x; else if (next - x <= radius) rows[y * width + x] = 1;
  }
  const band = new Uint8Array(width * height);
  for (let x = 0; x < width; x++) {
    let last = -Infinity;
    for (let y = 0; y < height; y++) if (rows[y * width + x]) { last = y; band[y * width + x] = 1; } else if (y - last <= radius) band[y * width + x] = 1;
    let next = Infinity;
    for (let y = height - 1; y >= 0; y--) if (rows[y * width + x]) next = y; else if (next - y <= radius) band[y * width + x] = 1;
  }
  for (let i = 0; i < band.length; i++) if (truth[i]! > 0 && truth[i]! < 255) band[i] = 1;
  return band;
}

export function score(predicted: Uint8Array, truth: Uint8Array, band: Uint8Array): Scores {
  if (predicted.length !== truth.length) throw new Error('predicted and true mattes differ in size');
  let inter = 0, union = 0, sum = 0, bandSum = 0, bandCount = 0;
  for (let i = 0; i < truth.length; i++) {
    const p = predicted[i]!, t = truth[i]!;
    const pi = p >= 128, ti = t >= 128;
    if (pi && ti) inter++;
    if (pi || ti) union++;
    const d = Math.abs(p - t);
    sum += d;
    if (band[i]) { bandSum += d; bandCount++; }
  }
  return { iou: union ? inter / union : 1, mae: sum / truth.length, edgeMae: bandCount ? bandSum / bandCount : 0 };
}

/** The flat backgrounds of the composite score: black, white and green. */
export const COMPOSITE_BACKGROUNDS = [[0, 0, 0], [255, 255, 255], [0, 255, 0]] as const;

export interface CompositeScores {
  /** Mean absolute difference (0..255, every channel, every background) over the whole image. */
  all: number;
  /** The same within the edge band. */
  edge: number;
}

/**
 * What a user sees on a new background: the cut-out (colour `rgb`, RGBA 4 bytes a pixel, with its
 * alpha) over each flat background against the true foreground (`fg`, RGB) with the true alpha over
 * the same. `rgb` may be RGBA (stride 4) or RGB (stride 3) with `alpha` given apart.
 */
export function compositeScore(rgb: Uint8Array, stride: number, alpha: Uint8Array, fg: Uint8Array, truth: Uint8Array, band: Uint8Array): CompositeScores {
  let sum = 0, bandSum = 0, bandCount = 0;
  for (let i = 0; i < truth.length; i++) {
    const a = alpha[i]! / 255, t = truth[i]! / 255;
    let d = 0;
    for (const bg of COMPOSITE_BACKGROUNDS) {
      for (let c = 0; c < 3; c++) {
        const out = a * rgb[i * stride + c]! + (1 - a) * bg[c]!;
        const want = t * fg[i * 3 + c]! + (1 - t) * bg[c]!;
        d += Math.abs(out - want);
      }
    }
    d /= 3 * COMPOSITE_BACKGROUNDS.length;
    sum += d;
    if (band[i]) { bandSum += d; bandCount++; }
  }
  return { all: sum / truth.length, edge: bandCount ? bandSum / bandCount : 0 };
}
