// removeBackground's settings that change its matte after the model and the refinement made it (so
// a cached matte serves them all, lib/matte-cache.ts): the region of interest, outside which
// nothing is foreground, and `semitransparency: false`, a hard matte.
#pragma once

#include "../frames.h"
#include "../plan.h"

namespace matte {

/**
 * The region of interest of `step` on a width x height image, in its pixels (edges rounded to the
 * nearest pixel); an `invalid_operations` error at the roi's path when it lies outside the image or
 * is empty. `input_width` x `input_height`: the input's size, for a region in the input's pixels.
 */
Box roi_box(const Step &step, int width, int height, int input_width, int input_height);

/** The settings of one removeBackground, resolved for the image at its step. */
struct MatteSettings {
  std::optional<Box> roi;  // none: the whole image
  bool hard = false;       // semitransparency false
};

/** The step's settings on a frame of `frames` (the region checked: roi_box). */
MatteSettings matte_settings(const Step &step, const Frames &frames);

/** The matte (one 8-bit band) with the settings applied: zero outside the region, and hard. */
vips::VImage apply_matte_settings(const vips::VImage &alpha, const MatteSettings &settings);

}  // namespace matte
