// The bounds the library and the addon both hold a job to, defined once: the addon checks them
// (addon.cc, steps/, load.cc) and exports them as `bounds` (addon.cc), which lib/schema.ts and
// lib/limits.ts read when the library loads, so the TypeScript side never writes a number of its own.
#pragma once

#include <cstdint>

namespace matte {

/** A resize's output side, in pixels (docs/api.md, "Operations (edit)"). */
constexpr int kMaxResizeSide = 10000;
/** A blur's radius. */
constexpr double kMaxBlurRadius = 250;
/** A brightness, contrast or saturation factor: at 255 one level of difference already spans 0..255. */
constexpr double kMaxToneFactor = 255;
/** The remove-background endpoint's trim margin: pixels a side, or a share of the subject's box. */
constexpr double kMaxTrimMarginPixels = 500;
constexpr double kMaxTrimMarginPercent = 50;

/** The staged cut-outs (docs/api.md, "Extensions: staged cut-outs"). `size`'s cap in megapixels. */
constexpr double kMinMegapixels = 0.01;
constexpr double kMaxMegapixels = 100;
/** A shadow's blur radius and its offsets, in pixels. */
constexpr double kMaxShadowBlur = 250;
constexpr double kMaxShadowOffset = 2000;
/** `place`: the subject's share of the canvas's limiting side (percent), the margin, an aspect ratio's terms. */
constexpr double kMinPlaceScale = 10;
constexpr double kMaxPlaceScale = 100;
constexpr double kMaxPlaceMarginPixels = 2000;
constexpr double kMaxPlaceMarginPercent = 40;
constexpr double kMaxAspectTerm = 100;
/** A region of interest's coordinates in pixels. */
constexpr double kMaxRoiPixels = 1000000;

/** Responsive images (docs/api.md, "Extensions: responsive images"). resize's device-pixel ratio. */
constexpr double kMinDpr = 1;
constexpr double kMaxDpr = 4;
/** sharpen: vips_sharpen's sigma, and its m1 (flat) and m2 (jagged) amounts, whose defaults are libvips' own. */
constexpr double kMaxSharpenSigma = 10;
constexpr double kMaxSharpenAmount = 100;
constexpr double kDefaultSharpenFlat = 0;
constexpr double kDefaultSharpenJagged = 3;
/** gamma: out = in^(1 / gamma). */
constexpr double kMinGamma = 0.1;
constexpr double kMaxGamma = 10;
/** extend and crop: pixels a side. */
constexpr double kMaxEdgePixels = 10000;

/** A whole number's range and its value when none is given. */
struct Bound {
  double min;
  double max;
  double fallback;
};

/** The output quality (jpeg, webp, avif): its range, and jpeg's and webp's default. */
constexpr Bound kQuality{1, 100, 80};
/** AVIF's default quality, on libheif's scale (which sharp's and libvips' heifsave use too). */
constexpr double kAvifQuality = 60;

/** The safety limits of one job (docs/api.md, "Input"): their ranges and defaults. */
constexpr Bound kMaxPixels{1, 1e15, 1e8};
constexpr Bound kMaxFrames{1, 1e6, 1000};
constexpr Bound kMaxMatteFrames{1, 1e6, 100};

/**
 * Bytes a decoded pixel may take on average: the decoder's output (width x height x frames x bands
 * x bytes per sample) is at most max_pixels x this, i.e. 8-bit RGBA at the pixel limit.
 */
constexpr double kDecodedBytesPerPixel = 4;

}  // namespace matte
