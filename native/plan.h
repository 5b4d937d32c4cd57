// The trusted plan of one job: the validated step list (built by lib/schema.ts, converted by
// addon.cc) and the output settings. The native side still checks the ranges it relies on.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <vips/vips8>

#include "bounds.h"

namespace matte {

enum class Fit { Contain, Cover, ScaleDown, Crop };

// removeBackground's matte (one 8-bit band, the size of the image at that step) handed in, computed
// before and kept by the caller (lib/matte-cache.ts), or handed back once computed. Owned by the
// job's worker (addon.cc), which keeps `given`'s buffer alive for the whole job.
struct MatteHandover {
  const uint8_t *given = nullptr;  // used instead of the model and the refinement when its size matches
  int given_width = 0;
  int given_height = 0;
  bool want = false;               // hand the computed matte back in `computed`
  vips::VImage computed;           // in memory, when `want` and the matte was computed here
  bool used_given = false;
  int frames = 1;                  // the frames the step runs on (steps/remove_background.cc): a matte a frame is not handed over
};

enum class Op {
  Resize,
  Rotate,
  Flip,
  Blur,
  Brightness,
  Contrast,
  Saturation,
  Background,
  RemoveBackground,
  Trim,
  TrimTransparent,  // the remove-background endpoint's crop to alpha > 0 (and its margin)
  ExtractAlpha,     // the remove-background endpoint's `channels=alpha`: the alpha band alone
  ExtractColour,    // the remove.bg route's zip: the colour bands alone, alpha dropped (not flattened)
};

struct Step {
  Op op;
  int index = 0;  // position in the user's list, for error paths

  // resize: 0 means "not given"
  int width = 0;
  int height = 0;
  Fit fit = Fit::Contain;
  // rotate: 90, 180 or 270 clockwise
  int angle = 0;
  // flip
  bool horizontal = false;
  bool vertical = false;
  // blur radius, brightness, contrast or saturation factor
  double value = 0;
  // background colour, 0..255 each
  std::array<double, 4> rgba{};
  // removeBackground: refine and clean the matte (default); average with the mirror's matte
  bool refine = true;
  bool tta = false;
  MatteHandover *matte = nullptr;  // none: the matte is computed and not handed back
  // trimTransparent: the margin around the box, in pixels or (margin_percent) in % of its sides
  double margin = 0;
  bool margin_percent = false;
  // trimTransparent with a margin a side (the remove.bg route's crop_margin: top, right, bottom,
  // left), each pixels plus a % of the box's width (left, right) or height (top, bottom)
  bool margin_sides = false;
  std::array<double, 4> margin_pixels_sides{};
  std::array<double, 4> margin_percent_sides{};
};

enum class Format { Png, Webp, Jpeg, Gif, Avif };

struct Limits {
  uint64_t max_pixels = uint64_t(kMaxPixels.fallback);
  int max_frames = int(kMaxFrames.fallback);
  int max_matte_frames = int(kMaxMatteFrames.fallback);
};

struct Plan {
  std::vector<Step> steps;
  Format format = Format::Png;
  int quality = int(kQuality.fallback);
  bool anim = true;
  Limits limits;
  int64_t timeout_ms = 0;  // the job's time budget (budget.h); 0: none
};

inline bool can_animate(Format f) { return f == Format::Gif || f == Format::Webp; }

}  // namespace matte
