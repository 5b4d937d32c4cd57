// The model's matte stretched back to the image's size (removeBackground with `refine: false`).
#pragma once

#include <vips/vips8>

#include <cstdint>

namespace matte {

/**
 * Bilinear stretch of a w x h 8-bit plane to W x H (W >= w, H >= h), sampled as libvips 8.14's
 * resize with the linear kernel does it (input x = output x * w / W - 0.5, edges repeated), so
 * within one level of libvips' result, at a small part of the CPU libvips' general affine upscale
 * spends on the same plane. With `centres`, pixel centres map to pixel centres
 * (input x = (output x + 0.5) * w / W - 0.5): the inverse of a box shrink (a shadow's plane).
 */
vips::VImage upscale_bilinear(const uint8_t *plane, int w, int h, int W, int H, bool centres = false);

}  // namespace matte
