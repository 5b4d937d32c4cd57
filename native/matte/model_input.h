// The model's input image for a removeBackground that is the job's first step, decoded apart
// from the full-size image, smaller, by the decoder itself (JPEG's DCT scaling, WebP's scale).
//
// The model sees a few hundred pixels a side: stretching a full-size photo down to it makes
// libvips box-shrink every decoded pixel first, where the decoder's own scale is nearly free and
// leaves lanczos3 a much smaller image. The full-size image is still decoded for the cut-out, on
// another thread while the model runs (steps/remove_background.cc).
#pragma once

#include "../load.h"

#include <vips/vips8>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace matte {

/**
 * The image decoded with shrink-on-load down to no less than twice the model's input size on
 * both axes (lanczos3 still does the last 2x or more), oriented and in sRGB as load() gives it;
 * nothing when the decoder cannot shrink it that much (not a JPEG or WebP, a small image) or when
 * it has alpha (removeBackground first reads the full image's alpha). Lazy: nothing is decoded yet.
 */
std::optional<vips::VImage> reduced_for_model(const uint8_t *data, size_t size, const LoadOptions &options,
                                              int model_width, int model_height);

}  // namespace matte
