#include "sniff_hevc.h"

#include "bit_reader.h"

namespace matte {

namespace {

const int kSpsNalType = 33;

// Every field read here lies in the first bytes of an SPS: even with 7 sub-layers and every
// Exp-Golomb code at its longest, under 200 bytes of RBSP (300 with emulation prevention).
const size_t kSpsPrefixBytes = 512;

}  // namespace

bool is_hevc_base_sps(const uint8_t *nal, size_t size) {
  // forbidden_zero_bit, nal_unit_type (6), nuh_layer_id (6), nuh_temporal_id_plus1 (3). libde265
  // discards NAL units of other layers, which carry another SPS syntax.
  if (size < 2) return false;
  int type = (nal[0] >> 1) & 0x3F;
  int layer = ((nal[0] & 1) << 5) | (nal[1] >> 3);
  return type == kSpsNalType && layer == 0;
}

std::optional<HevcPictureSize> hevc_sps_size(const uint8_t *nal, size_t size) {
  // The RBSP: the payload after the header, without the emulation-prevention byte of each 00 00 03.
  uint8_t rbsp[kSpsPrefixBytes];
  size_t length = 0;
  int zeros = 0;
  for (size_t i = 2; i < size && length < sizeof rbsp; i++) {
    if (zeros >= 2 && nal[i] == 3) {
      zeros = 0;
      continue;
    }
    zeros = nal[i] == 0 ? zeros + 1 : 0;
    rbsp[length++] = nal[i];
  }

  Bits b{rbsp, length};
  b.read(4);  // sps_video_parameter_set_id
  int sub_layers = int(b.read(3));  // sps_max_sub_layers_minus1
  b.read(1);  // sps_temporal_id_nesting_flag
  // profile_tier_level(1, sps_max_sub_layers_minus1): the general profile and level (96 bits),
  // then a profile (88 bits) and a level (8 bits) for each sub-layer that says it has them.
  b.read(48), b.read(48);
  bool profile_present[8] = {}, level_present[8] = {};
  for (int i = 0; i < sub_layers; i++) {
    profile_present[i] = b.read(1);
    level_present[i] = b.read(1);
  }
  if (sub_layers > 0)
    for (int i = sub_layers; i < 8; i++) b.read(2);  // reserved_zero_2bits
  for (int i = 0; i < sub_layers; i++) {
    if (profile_present[i]) b.read(44), b.read(44);
    if (level_present[i]) b.read(8);
  }
  b.ue();  // sps_seq_parameter_set_id
  uint64_t chroma_format = b.ue();
  bool separate_planes = chroma_format == 3 && b.read(1);
  HevcPictureSize picture;
  picture.coded_width = b.ue();
  picture.coded_height = b.ue();
  uint64_t left = 0, right = 0, top = 0, bottom = 0;
  if (b.read(1)) {  // conformance_window_flag
    left = b.ue(), right = b.ue(), top = b.ue(), bottom = b.ue();
  }
  if (b.bad || chroma_format > 3) return std::nullopt;
  // The window's offsets are in chroma samples (H.265 table 6-1).
  uint64_t unit_x = !separate_planes && (chroma_format == 1 || chroma_format == 2) ? 2 : 1;
  uint64_t unit_y = !separate_planes && chroma_format == 1 ? 2 : 1;
  uint64_t crop_x = unit_x * (left + right), crop_y = unit_y * (top + bottom);
  if (crop_x >= picture.coded_width || crop_y >= picture.coded_height) return std::nullopt;
  picture.width = picture.coded_width - crop_x;
  picture.height = picture.coded_height - crop_y;
  return picture;
}

}  // namespace matte
