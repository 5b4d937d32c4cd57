// The trusted plan of one job: the validated step list (built by lib/schema.ts, converted by
// addon.cc) and the output settings. The native side still checks the ranges it relies on.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace matte {

enum class Fit { Contain, Cover, ScaleDown, Crop };

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
  // trimTransparent: the margin around the box, in pixels or (margin_percent) in % of its sides
  double margin = 0;
  bool margin_percent = false;
};

enum class Format { Png, Webp, Jpeg, Gif, Avif };

// Largest brightness, contrast or saturation factor (lib/schema.ts MAX_TONE_FACTOR, held equal by
// test/engine/native-bounds.test.ts): at 255 one level of difference already spans 0..255.
constexpr double kMaxToneFactor = 255;

// Bytes a decoded pixel may take on average: the decoder's output (width x height x frames x
// bands x bytes per sample) is at most max_pixels x this, i.e. 8-bit RGBA at the pixel limit.
// lib/limits.ts DECODED_BYTES_PER_PIXEL is the same number (test/engine/native-bounds.test.ts).
constexpr double kDecodedBytesPerPixel = 4;

struct Limits {
  uint64_t max_pixels = 100000000;
  int max_frames = 1000;
  int max_matte_frames = 100;
};

struct Plan {
  std::vector<Step> steps;
  Format format = Format::Png;
  int quality = 80;
  bool anim = true;
  Limits limits;
  int64_t timeout_ms = 0;  // the job's time budget (budget.h); 0: none
};

inline bool can_animate(Format f) { return f == Format::Gif || f == Format::Webp; }

}  // namespace matte
