// The sizes a HEIF file (AVIF, HEIC) declares and the sizes its coded streams decode to, read from
// the file's own boxes (ISO BMFF / HEIF): libheif 1.15 hands libvips the `ispe` size as the image's
// and lets the AV1 or HEVC decoder allocate whatever picture the stream's parameter sets declare.
#pragma once

#include <cstddef>
#include <cstdint>

namespace matte {

enum class HeifFrames {
  Match,
  /** An item's coded size differs from its `ispe` (docs/api.md, "Input", for each codec's rule). */
  SizeDiffers,
  /** An AV1 or HEVC item without an `ispe`, which HEIF requires of every image item. */
  Undeclared,
  /** An item's HEVC SPS or AV1 sequence header cannot be read (its decoder would refuse it too). */
  Unreadable,
  /** The items' data add up to more than the file: extents repeated, which no encoder writes. */
  DataOverlaps,
};

/**
 * Every AV1 (av01) and HEVC (hvc1) item's parameter sets, in its codec configuration (av1C's
 * configOBUs, hvcC's arrays) and in its data, against the size its `ispe` declares. Items without
 * an `ispe` are refused; other codecs are not judged here.
 */
HeifFrames heif_frames_check(const uint8_t *data, size_t size);

}  // namespace matte
