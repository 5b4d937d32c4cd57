// matte's own Lanczos3 downscale of 8-bit RGB images (docs/architecture.md, "Resampling"). libvips
// 8.14's reduceh computes each output sample in plain C behind a switch per pixel, and its reducev
// in 6-bit ORC arithmetic; 8.15 replaced both with SIMD, which Debian 12 does not have. These
// reducers keep 8.14's geometry and edge rules exactly (output size, the integer box pre-shrink of
// `gap` 2, the offsets that centre the samples, the tap count, the 1/64-pixel coefficient tables,
// edge pixels repeated) and compute every sample in 12-bit fixed point, as reduceh's C path does,
// with vector loops.
#pragma once

#include <vips/vips8>

namespace matte {

/** Whether resize_down_lanczos3 takes the image: 8-bit, 3 bands (sRGB without alpha), uncoded. */
bool reducible_rgb8(const vips::VImage &image);

/**
 * vips_resize(in, hscale, vscale, kernel lanczos3) for a downscale (both scales <= 1, one < 1) of an
 * image reducible_rgb8 accepts: the same size and geometry, each sample within one level of
 * libvips 8.14's. Lazy, as a libvips operation: it computes what its consumer asks for.
 */
vips::VImage resize_down_lanczos3(const vips::VImage &in, double hscale, double vscale);

}  // namespace matte
