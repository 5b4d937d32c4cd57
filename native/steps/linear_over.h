// backgroundImage's blend of 8-bit images in one pass (background_image.cc): a shadow's layer over
// the opaque background in sRGB, then the subject over that in linear light. libvips did it in six
// operations, each a pass over the canvas (bandjoin, two blending ifthenelse, three maplut).
#pragma once

#include <vips/vips8>

#include <cstdint>

namespace matte {

/** sRGB's 8 bits to linear light as 16 bits (256 entries), and back (65536), rounded to nearest. */
struct LinearTables {
  uint16_t to_linear[256];
  uint8_t to_srgb[65536];
};
const LinearTables &linear_tables();

/** Whether linear_over takes these: an 8-bit RGBA subject, an opaque 8-bit RGB background and, if
 * given, an 8-bit RGBA shadow, all of one size. */
bool linear_over_takes(const vips::VImage &subject, const vips::VImage &background, const vips::VImage *shadow);

/**
 * The subject over (shadow over background, in sRGB) in linear light, as 8-bit sRGB: the same bytes
 * as libvips' blending ifthenelse on the 16-bit linear values and background_image.cc's tables.
 */
vips::VImage linear_over(const vips::VImage &subject, const vips::VImage &background, const vips::VImage *shadow);

}  // namespace matte
