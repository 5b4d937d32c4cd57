// Blends of 8-bit layers in one pass, each giving the bytes of the libvips operations it replaces:
// backgroundImage's (background_image.cc: a shadow's layer over the opaque background in sRGB, then
// the subject over that in linear light; six libvips operations, each a pass over the canvas:
// bandjoin, two blending ifthenelse, three maplut), and the flatten of a shadow's layer under a
// cut-out for a step or the encoder (frames.h; libvips' general composite, in floats).
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

/** Whether srgb_over takes these: two 8-bit sRGB RGBA images of one size. */
bool srgb_over_takes(const vips::VImage &under, const vips::VImage &image);

/** `image` over `under`, as libvips' composite2 with mode OVER computes it for them (its vector path:
 * premultiplied floats), as 8-bit RGBA. */
vips::VImage srgb_over(const vips::VImage &under, const vips::VImage &image);

}  // namespace matte
