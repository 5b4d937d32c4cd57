// The picture size an HEVC sequence parameter set declares (H.265 7.3.2.2), read from the NAL unit
// itself: libde265 allocates every picture at the SPS's coded size and hands libheif the part
// inside its conformance window, whatever the HEIF file's `ispe` says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace matte {

struct HevcPictureSize {
  uint64_t coded_width = 0, coded_height = 0;  // pic_width/height_in_luma_samples
  uint64_t width = 0, height = 0;              // inside the conformance window
};

/** Whether a NAL unit (from its 2-byte header) is a sequence parameter set of the base layer. */
bool is_hevc_base_sps(const uint8_t *nal, size_t size);

/** The sizes an SPS NAL unit (header included) declares; nullopt when they cannot be read. */
std::optional<HevcPictureSize> hevc_sps_size(const uint8_t *nal, size_t size);

}  // namespace matte
