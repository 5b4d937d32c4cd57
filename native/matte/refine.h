// Refinement of the model's matte at the image's full resolution, guided by the image, and the
// cleanup of near-0 / near-255 values (docs/api.md, "Capacity and shutdown", background removal).
// bench/quality scores it (bench/README.md, "Background-removal quality").
#pragma once

#include <cstdint>
#include <vector>

#include <vips/vips8>

#include "edge_colour.h"

namespace matte {

class Budget;

struct RefineParams {
  // The band where the model is unsure: model pixels with a value in (band_low, band_high), or
  // next to a pixel on the other side of 0.5, dilated by `grow` model pixels. Only full-resolution
  // pixels it covers are refined (the cost follows the outline, not the area).
  float band_low = 0.04f, band_high = 0.96f;
  int grow = 1;  // model pixels
  // The colour-guided filter (guided_filter.h): alpha ~ a . I + b fitted over windows of
  // `radius` model pixels with the ridge `eps` (colours in 0..1), applied to the full-resolution
  // image.
  int radius = 4;
  float eps = 1e-4f;
  // Its output sharpened around 0.5 by `stretch`, plus `stretch_per_upscale` for every unit of
  // upscale factor (full size / model size) above 1. 0: a constant scored as well on both models,
  // and a positive value made an upscaled image's matte sharper than the image itself.
  float stretch = 1.5f;
  float stretch_per_upscale = 0.0f;
  // Then, at full resolution, the transition's alpha from its own colours (edge_colour.h).
  EdgeColourParams edge;
  // Cleanup: values <= floor become 0, >= ceiling become 255 (0..255).
  int floor = 24, ceiling = 231;
};

/**
 * The refined full-resolution matte. `model_rgb` is the image the model saw (model_width x
 * model_height, interleaved RGB: the image stretched to the model's input), `model_matte` its
 * matte (same size, 0..255); `rgb` the full-resolution image (3 bands, uchar). Returns a
 * one-band uchar image of rgb's size. The full-resolution passes run on the job's threads
 * (refine_bands.h), polling `budget` (if any) between bands of rows: a stopped job throws its Error.
 */
vips::VImage refine_matte(const vips::VImage &rgb, const uint8_t *model_rgb, const std::vector<uint8_t> &model_matte,
                          int model_width, int model_height, const RefineParams &params,
                          Budget *budget = nullptr);

/** Only the cleanup (values near 0 or 255 snapped) on a one-band uchar matte. */
void clean_matte(uint8_t *alpha, size_t count, const RefineParams &params);

}  // namespace matte
