// matte's own bicubic enlargement of 8-bit RGB images (docs/architecture.md, "Resampling"). For a
// scale above 1, libvips 8.14's vips_resize calls vips_affine with its bicubic interpolator, which
// computes every output pixel through a function pointer from a 4x4 stencil. The samples are the
// same here (Catmull-Rom in 12-bit fixed point, each row of the stencil rounded before the column
// is, the tables every 1/64 of a pixel, the input displaced by half a pixel, edges repeated), but
// each input row's horizontal taps are computed once for all the output rows that read it.
#pragma once

#include <vips/vips8>

namespace matte {

/**
 * vips_resize(in, hscale, vscale, kernel lanczos3) for an enlargement (both scales >= 1, one > 1)
 * of an image reducible_rgb8 accepts: the same size (libvips' affine rounds it) and each sample
 * within one level of libvips 8.14's. Lazy, as a libvips operation.
 */
vips::VImage resize_up_bicubic(const vips::VImage &in, double hscale, double vscale);

}  // namespace matte
