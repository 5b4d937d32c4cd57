// What a decoder allocates is held to the limits, not only what the header declares: the size
// each decoder really works on is read from the file's own structure (sniff.h, sniff_heif.h),
// before any pixel is decoded.
#pragma once

#include "plan.h"
#include "sniff.h"

#include <cstddef>
#include <cstdint>

namespace matte {

struct Declared {
  uint64_t width, height;  // one frame, from the decoder's header
  uint64_t frames;
  uint64_t bytes_per_pixel;  // bands x bytes a sample, as libvips decodes them
};

/**
 * Throws unsupported_image when a frame decodes to another size than its header declares (a WebP
 * bitstream against its canvas or frame, an AV1 frame against `ispe`, a JPEG in a TIFF against its
 * strip or tile, a TIFF tile far larger than its image), and image_too_large when the area the
 * decoder works on (whole TIFF tiles, a GIF's frames past its screen) or a progressive JPEG's
 * coefficient image is over the limits.
 */
void check_decoded_size(ImageType type, const uint8_t *data, size_t size, const Declared &declared,
                        const Limits &limits);

}  // namespace matte
