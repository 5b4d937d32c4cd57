// The eight exact turns and mirrors of an image (rotate, flip, EXIF orientation), each one lazy
// pass that copies pixels, with libvips' bytes and metadata.
//
// Why not libvips' rot and flip: 8.14 copies a pixel a byte at a time, and rot asks for small
// tiles, so the steps before it (the reducer, the decode) were computed tile by tile with their
// margins: a turn cost many times the copy it is (bench/README.md, "Turns").
#pragma once

#include <vips/vips8>

namespace matte {

/** A clockwise turn by `angle` (0, 90, 180 or 270), then a left-right mirror when `mirror`. */
struct Turn {
  int angle;
  bool mirror;
  /** Whether the turned image's width is the input's height. */
  bool swaps() const { return angle == 90 || angle == 270; }
};

/**
 * `in` turned. A top-bottom mirror is a turn by 180 mirrored. Anything but a left-right mirror
 * alone reads its input out of row order: hand it an image in memory (or one libvips decodes whole
 * on first read), as libvips' rot wants too.
 */
vips::VImage turned(const vips::VImage &in, Turn turn);

/** The turn that makes an image of EXIF orientation 1..8 upright (vips_autorot's table). */
Turn turn_of(int orientation);

/**
 * The rectangle of an in_width x in_height image whose pixels `turn` carries onto `out` (a
 * rectangle of the turned image, which may reach past its edges: a pad's box).
 */
VipsRect turned_source(const VipsRect &out, int in_width, int in_height, Turn turn);

/** `in` upright by its EXIF orientation (1..8), the orientation tags removed: vips_autorot's result. */
vips::VImage upright(const vips::VImage &in, int orientation);

}  // namespace matte
