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

// The specification's four fits, and the extensions pad and fill (docs/api.md, "Extensions: responsive images").
enum class Fit { Contain, Cover, ScaleDown, Crop, Pad, Fill };

// Which window of the scaled image cover and crop keep, or where pad places the image in its box:
// a compass point, a focal point (focus_x, focus_y), the subject's matte, or libvips' attention.
enum class Gravity { Centre, North, NorthEast, East, SouthEast, South, SouthWest, West, NorthWest, Focus, Subject, Attention };

// A step's matte handed in, computed before and kept by the caller (lib/matte-cache.ts), or handed
// back once computed: removeBackground's (one 8-bit band, the size of the image at that step), or
// the model's matte a resize's subject gravity chose its window with (the model's own size). One
// per step that asks; owned by the job's worker (addon.cc), which keeps `given`'s buffer alive for
// the whole job.
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
  // The staged cut-outs: extensions beside the specification's ten (docs/api.md).
  Size,             // a cap in megapixels
  Shadow,           // a drop or contact shadow cast by the alpha, under the subject
  BackgroundImage,  // the image so far over the request's background image, covered and centred
  Place,            // the subject scaled and placed; the canvas padded to an aspect ratio
  // Responsive images: extensions beside the specification's ten (docs/api.md).
  Sharpen,          // libvips' unsharp mask
  Gamma,            // out = in^(1 / gamma) on the colour bands
  Extend,           // pixels added a side, in a colour
  Crop,             // pixels cut off a side
};

struct Step {
  Op op;
  int index = 0;  // position in the user's list, for error paths

  // resize: 0 means "not given"
  int width = 0;
  int height = 0;
  Fit fit = Fit::Contain;
  // resize's extensions: the gravity (focus: x and y as fractions of the image, or pad's place as
  // fractions of its free space); enlarge when given (else the fit's default: enlarges()); the
  // device-pixel ratio; keep_box_aspect: without enlarging, a box larger than the image is first
  // shrunk into it keeping its aspect (cover, crop, fill); pad's box colour is rgba
  Gravity gravity = Gravity::Centre;
  double focus_x = 0.5;
  double focus_y = 0.5;
  bool enlarge_given = false;
  bool enlarge = false;
  bool keep_box_aspect = false;
  double dpr = 1;
  // rotate: 90, 180 or 270 clockwise
  int angle = 0;
  // flip
  bool horizontal = false;
  bool vertical = false;
  // blur radius, brightness, contrast or saturation factor
  double value = 0;
  // background, pad's box, extend's colour: 0..255 each
  std::array<double, 4> rgba{};
  // sharpen: sigma (0: nothing) and vips_sharpen's m1 (flat areas) and m2 (jagged ones)
  double sigma = 0;
  double flat = 0;
  double jagged = 0;
  // extend, crop: pixels a side, top, right, bottom, left
  std::array<int, 4> sides{};
  // removeBackground: refine and clean the matte (default); average with the mirror's matte
  bool refine = true;
  bool tta = false;
  MatteHandover *matte = nullptr;  // none: the matte is computed and not handed back (resize's subject too)
  // trimTransparent: the margin around the box, in pixels or (margin_percent) in % of its sides;
  // place: the margin inside the canvas, in pixels or in % of the canvas's sides
  double margin = 0;
  bool margin_percent = false;
  // trimTransparent with a margin a side (the remove.bg route's crop_margin: top, right, bottom,
  // left), each pixels plus a % of the box's width (left, right) or height (top, bottom)
  bool margin_sides = false;
  std::array<double, 4> margin_pixels_sides{};
  std::array<double, 4> margin_percent_sides{};
  // removeBackground: only what lies inside the region of interest can be foreground (edges in
  // pixels, or in % of the width for x and of the height for y; roi_of_input: pixels of the input
  // as loaded, scaled to the image at this step); semitransparency false: a hard matte
  bool has_roi = false;
  std::array<double, 4> roi{};
  std::array<bool, 4> roi_percent{};
  bool roi_of_input = false;
  bool semitransparency = true;
  // size: the cap in pixels (0: none)
  double max_area = 0;
  // shadow: its colour is rgba; blur (a radius, sigma = radius / 2) and offsets in pixels, or
  // (negative blur, has_offset false) the defaults, which scale with the subject
  bool contact = false;
  double opacity = 0;
  double blur = -1;
  bool has_offset = false;
  double offset_x = 0;
  double offset_y = 0;
  // place: scale in % of the canvas's limiting side (0: the subject keeps its size); position in %
  // of the free space (negative: the original place); aspect ratio (0: the canvas keeps its shape)
  double scale = 0;
  double position_x = -1;
  double position_y = -1;
  int aspect_width = 0;
  int aspect_height = 0;
};

/** Whether a resize may go past the source's size: as given, else its fit's default (contain, cover, pad, fill do). */
inline bool enlarges(const Step &step) {
  if (step.enlarge_given) return step.enlarge;
  return step.fit != Fit::ScaleDown && step.fit != Fit::Crop;
}

enum class Format { Png, Webp, Jpeg, Gif, Avif };

struct Limits {
  uint64_t max_pixels = uint64_t(kMaxPixels.fallback);
  int max_frames = int(kMaxFrames.fallback);
  int max_matte_frames = int(kMaxMatteFrames.fallback);
};

struct Plan {
  std::vector<Step> steps;
  Format format = Format::Png;
  bool auto_format = false;  // `auto`: PNG where the result has an alpha below 255, else JPEG (format is decided then)
  int quality = 0;  // 0: the format's default (bounds.h: kQuality's, AVIF kAvifQuality)
  bool anim = true;
  Limits limits;
  int64_t timeout_ms = 0;  // the job's time budget (budget.h); 0: none
  // The request's background image (backgroundImage), kept alive by the caller for the job.
  const uint8_t *background = nullptr;
  size_t background_size = 0;
};

inline bool can_animate(Format f) { return f == Format::Gif || f == Format::Webp; }

}  // namespace matte
