// Refinement of the model's matte at the image's full resolution, guided by the image, and the
// cleanup of near-0 / near-255 values (decisions.md section 11). Measured by bench/quality.
#pragma once

#include <cstdint>
#include <vector>

#include <vips/vips8>

namespace matte {

struct RefineParams {
  // The band where the model is unsure: model pixels with a value in (band_low, band_high), or
  // next to a pixel on the other side of 0.5, dilated by `grow` model pixels.
  float band_low = 0.04f, band_high = 0.96f;
  int grow = 1;  // model pixels
  // Local colour models: mean colours of the confident foreground (matte >= sure) and background
  // (matte <= 1 - sure) within `radius` model pixels.
  float sure = 0.9f;
  int radius = 4;
  // The colour estimate is trusted in proportion to how far apart the two colours are: fully at
  // a distance of `separation` (0..255 RGB units) and more.
  float separation = 120.0f;
  // ... and in proportion to how well the pixel's colour is a blend of the two: not at all when it
  // lies `fit` (RGB units) or more away from the line from B to F.
  float fit = 12.0f;
  // Then the band is smoothed by a 3x3 mean (the colour estimate is noisy on texture): 0 or 1.
  int smooth = 1;
  // Where it is not trusted, the model's matte is sharpened around 0.5 by this factor.
  float stretch = 3.0f;
  // The estimate in the band: 0, the colour lines above; 1, the colour-guided filter fitted at the
  // model's resolution (radius `guided_radius` model pixels, ridge `guided_eps`) and applied to the
  // full-resolution image (guided_filter.h), then sharpened around 0.5 by `guided_stretch`.
  int method = 0;
  int guided_radius = 2;
  float guided_eps = 1e-3f;
  float guided_stretch = 1.0f;
  // Cleanup: values <= floor become 0, >= ceiling become 255 (0..255).
  int floor = 24, ceiling = 231;
};

/** The parameters in force: the defaults, or MATTE_REFINE_PARAMS (bench/quality only). */
RefineParams refine_params();

/**
 * The refined full-resolution matte. `model_rgb` is the image the model saw (model_width x
 * model_height, interleaved RGB: the image stretched to the model's input), `model_matte` its
 * matte (same size, 0..255); `rgb` the full-resolution image (3 bands, uchar). Returns a
 * one-band uchar image of rgb's size.
 */
vips::VImage refine_matte(const vips::VImage &rgb, const uint8_t *model_rgb, const std::vector<uint8_t> &model_matte,
                          int model_width, int model_height, const RefineParams &params);

/** Only the cleanup (values near 0 or 255 snapped) on a one-band uchar matte. */
void clean_matte(uint8_t *alpha, size_t count, const RefineParams &params);

}  // namespace matte
