// matte's PNG encoder: the same file libvips' pngsave writes with strip and compression 6 (filter
// None, IHDR + pHYs + IDAT + IEND), but deflated on every core the job has. See png.cc and
// docs/architecture.md, "PNG encoding".
#pragma once

#include <vips/vips8>

#include <cstddef>

namespace matte {

struct PngOptions {
  int threads = 0;          // deflate threads; 0: libvips' worker count now (the job's share of the cores)
  size_t stripe_bytes = 0;  // filtered bytes per independently deflated stripe; 0: the default
};

/**
 * Whether encode_png writes this image: 8-bit, 1 or 2 bands (grey) or 3 or 4 (sRGB), one page,
 * uncoded. Anything else goes to libvips' saver, which converts it first.
 */
bool png_encodable(const vips::VImage &image);

/**
 * Computes `image` (region by region, through a libvips sink, so the job's budget stops it like any
 * libvips saver) and encodes it as PNG into a g_malloc'ed buffer. Throws vips::VError when the
 * pixels fail or the job is stopped, matte::Error `internal` when the encoder itself fails.
 */
void encode_png(const vips::VImage &image, void **data, size_t *size, const PngOptions &options = {});

}  // namespace matte
