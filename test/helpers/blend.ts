// Alpha blending computed in the test, independently of libvips: sRGB <-> linear light (IEC
// 61966-2-1) and the blend of a colour over another in linear light, as backgroundImage does
// (docs/api.md, "Extensions: staged cut-outs").

export function toLinear(v: number): number {
  const c = v / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

export function toSrgb(l: number): number {
  const c = l <= 0.0031308 ? l * 12.92 : 1.055 * Math.max(0, l) ** (1 / 2.4) - 0.055;
  return Math.min(255, Math.max(0, c * 255));
}

/** One channel of `fg` with alpha `a` (0..255) over an opaque `bg`, in linear light, as 0..255 (not rounded). */
export function blendLinear(fg: number, a: number, bg: number): number {
  return toSrgb((a / 255) * toLinear(fg) + (1 - a / 255) * toLinear(bg));
}
