// AVIF output through libheif, called directly rather than through libvips' heifsave.
#pragma once

#include <vips/vips8>

#include <cstddef>

namespace matte {

/**
 * Encodes one 8-bit sRGB image (3 bands, or 4 with alpha) as AVIF with the settings libvips 8.14's
 * heifsave uses by default (effort 4 = aom speed 5, 4:2:0, lossy, no metadata) at `quality` (heifsave's
 * Q: libheif's lossy quality, 1..100), plus the two
 * encoder parameters libvips cannot pass (native/encode/avif.cc says why):
 *  - threads: the job's share of the cores, at least 2;
 *  - IntraBC off.
 * The pixels are computed by a libvips sink, so a job's budget stops that phase; the AV1 encode
 * after it cannot be stopped (libaom has no cancel). `*data` is g_malloc'ed.
 */
void encode_avif(const vips::VImage &image, int quality, void **data, size_t *size);

}  // namespace matte
