// Whole frames for the encoders that take a frame at a time (GIF, animated WebP), computed the way
// libvips' own savers compute them: through vips_sink_disc, so the job's budget (native/budget.cc:
// the "eval" signal, the kill flag) stops the pixel phase as it stopped libvips' savers.
#pragma once

#include <vips/vips8>

#include <cstdint>
#include <functional>

namespace matte {

/**
 * 8-bit sRGB, as libvips' savers make what they are given (the pipeline already delivers it: this
 * guards the contract): grey (1 or 2 bands) becomes RGB, 16-bit is scaled down, anything else cast.
 */
vips::VImage srgb8(vips::VImage image);

/**
 * Computes `image` (its frames stacked top to bottom, `page_height` rows each) region by region on
 * libvips' workers and calls `frame(pixels, index)` with every whole frame in order, contiguous
 * (width x page_height x bands bytes, writable), on the sink's writer thread while the workers
 * compute the next rows. An exception thrown by `frame` stops the sink and is rethrown here; a
 * failure of the pixels (a corrupt input, the budget's kill flag) is thrown as vips::VError.
 */
void sink_frames(const vips::VImage &image, int page_height, const std::function<void(uint8_t *pixels, int index)> &frame);

}  // namespace matte
