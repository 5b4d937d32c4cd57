// The sizes an AVIF declares and the sizes its AV1 streams decode to, read from the file's own
// boxes (ISO BMFF / HEIF): libheif 1.15 hands libvips the `ispe` size as the image's and lets the
// AV1 decoder allocate whatever frame the stream's sequence header declares.
#pragma once

#include <cstddef>
#include <cstdint>

namespace matte {

/**
 * Whether every AV1 item's coded frame size (its sequence header's maximum frame size) is the size
 * its `ispe` property declares. Items without both, and other codecs, are not judged here.
 */
bool heif_frames_match_headers(const uint8_t *data, size_t size);

}  // namespace matte
