#include "sniff_heif.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace matte {

namespace {

// A bounded big-endian reader: reading past the end sets `bad` and yields zeros.
struct Reader {
  const uint8_t *data;
  size_t size, pos = 0;
  bool bad = false;
  Reader(const uint8_t *data, size_t size) : data(data), size(size) {}
  uint64_t read(size_t bytes) {
    if (bytes > size - std::min(pos, size) || pos > size) {
      bad = true;
      pos = size;
      return 0;
    }
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; i++) value = (value << 8) | data[pos + i];
    pos += bytes;
    return value;
  }
};

struct Box {
  char type[4];
  size_t start, end;  // the payload
};

// The boxes in [begin, end): each as {type, payload}; stops at the first malformed one.
std::vector<Box> boxes(const uint8_t *data, size_t begin, size_t end) {
  std::vector<Box> out;
  size_t pos = begin;
  while (pos + 8 <= end) {
    uint64_t length = (uint64_t(data[pos]) << 24) | (data[pos + 1] << 16) | (data[pos + 2] << 8) | data[pos + 3];
    size_t header = 8;
    if (length == 1) {
      if (pos + 16 > end) break;
      Reader r(data + pos + 8, 8);
      length = r.read(8);
      header = 16;
    } else if (length == 0) {
      length = end - pos;
    }
    if (length < header || length > end - pos) break;
    Box box;
    std::memcpy(box.type, data + pos + 4, 4);
    box.start = pos + header;
    box.end = pos + size_t(length);
    out.push_back(box);
    pos = box.end;
  }
  return out;
}

const Box *find(const std::vector<Box> &list, const char *type) {
  for (const Box &box : list)
    if (std::memcmp(box.type, type, 4) == 0) return &box;
  return nullptr;
}

// AV1's leb128, as in OBU sizes.
uint64_t leb128(Reader &r) {
  uint64_t value = 0;
  for (int i = 0; i < 8; i++) {
    uint64_t byte = r.read(1);
    value |= (byte & 0x7F) << (i * 7);
    if (!(byte & 0x80)) break;
  }
  return value;
}

struct Bits {
  const uint8_t *data;
  size_t size, bit = 0;
  bool bad = false;
  uint64_t read(int n) {
    uint64_t value = 0;
    for (int i = 0; i < n; i++) {
      if (bit / 8 >= size) {
        bad = true;
        return 0;
      }
      value = (value << 1) | ((data[bit / 8] >> (7 - bit % 8)) & 1);
      bit++;
    }
    return value;
  }
  uint64_t uvlc() {
    int zeros = 0;
    while (!bad && !read(1) && zeros < 32) zeros++;
    return zeros >= 32 ? 0 : read(zeros) + (uint64_t(1) << zeros) - 1;
  }
};

// max_frame_width/height of an AV1 sequence header OBU's payload (AV1 spec 5.5.1).
std::optional<std::pair<uint64_t, uint64_t>> sequence_header_size(const uint8_t *data, size_t size) {
  Bits b{data, size};
  b.read(3);  // seq_profile
  b.read(1);  // still_picture
  bool reduced = b.read(1);
  if (reduced) {
    b.read(5);  // seq_level_idx[0]
  } else {
    bool timing_info = b.read(1);
    bool decoder_model_info = false;
    int buffer_delay_length = 0;
    if (timing_info) {
      b.read(32), b.read(32);  // num_units_in_display_tick, time_scale
      if (b.read(1)) b.uvlc();  // equal_picture_interval: num_ticks_per_picture_minus_1
      decoder_model_info = b.read(1);
      if (decoder_model_info) {
        buffer_delay_length = int(b.read(5)) + 1;
        b.read(32);  // num_units_in_decoding_tick
        b.read(5), b.read(5);  // buffer_removal_time_length_minus_1, frame_presentation_time_length_minus_1
      }
    }
    bool initial_display_delay = b.read(1);
    int operating_points = int(b.read(5)) + 1;
    for (int i = 0; i < operating_points && !b.bad; i++) {
      b.read(12);  // operating_point_idc
      if (b.read(5) > 7) b.read(1);  // seq_level_idx, seq_tier
      if (decoder_model_info && b.read(1)) b.read(buffer_delay_length), b.read(buffer_delay_length), b.read(1);
      if (initial_display_delay && b.read(1)) b.read(4);
    }
  }
  int width_bits = int(b.read(4)) + 1, height_bits = int(b.read(4)) + 1;
  uint64_t width = b.read(width_bits) + 1, height = b.read(height_bits) + 1;
  if (b.bad) return std::nullopt;
  return std::make_pair(width, height);
}

// The first sequence header among the OBUs in [data, data + size).
std::optional<std::pair<uint64_t, uint64_t>> av1_frame_size(const uint8_t *data, size_t size) {
  Reader r(data, size);
  while (!r.bad && r.pos < size) {
    uint64_t header = r.read(1);
    int type = int((header >> 3) & 0x0F);
    if (header & 0x04) r.read(1);  // extension
    if (!(header & 0x02)) return std::nullopt;  // without a size field, the OBU runs to the end: not in AVIF
    uint64_t length = leb128(r);
    if (r.bad || length > size - r.pos) return std::nullopt;
    if (type == 1) return sequence_header_size(data + r.pos, size_t(length));
    r.pos += size_t(length);
  }
  return std::nullopt;
}

}  // namespace

bool heif_frames_match_headers(const uint8_t *data, size_t size) {
  std::vector<Box> top = boxes(data, 0, size);
  const Box *meta = find(top, "meta");
  if (!meta || meta->end - meta->start < 4) return true;
  std::vector<Box> inside = boxes(data, meta->start + 4, meta->end);  // after the full box's version/flags

  // Item types (iinf / infe version 2 or 3).
  std::map<uint32_t, bool> is_av1;
  if (const Box *iinf = find(inside, "iinf")) {
    Reader r(data + iinf->start, iinf->end - iinf->start);
    int version = int(r.read(1));
    r.read(3);
    r.read(version == 0 ? 2 : 4);  // entry_count
    for (const Box &infe : boxes(data, iinf->start + r.pos, iinf->end)) {
      if (std::memcmp(infe.type, "infe", 4) != 0) continue;
      Reader e(data + infe.start, infe.end - infe.start);
      int infe_version = int(e.read(1));
      e.read(3);
      if (infe_version < 2) continue;
      uint32_t id = uint32_t(e.read(infe_version == 2 ? 2 : 4));
      e.read(2);  // item_protection_index
      if (!e.bad && e.pos + 4 <= infe.end - infe.start) is_av1[id] = std::memcmp(data + infe.start + e.pos, "av01", 4) == 0;
    }
  }

  // Properties (ipco) and which item has which (ipma): the ispe of each item.
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> declared;
  if (const Box *iprp = find(inside, "iprp")) {
    std::vector<Box> parts = boxes(data, iprp->start, iprp->end);
    const Box *ipco = find(parts, "ipco");
    std::vector<Box> properties = ipco ? boxes(data, ipco->start, ipco->end) : std::vector<Box>();
    for (const Box &ipma : parts) {
      if (std::memcmp(ipma.type, "ipma", 4) != 0) continue;
      Reader r(data + ipma.start, ipma.end - ipma.start);
      int version = int(r.read(1));
      uint64_t flags = r.read(3);
      uint64_t entries = r.read(4);
      for (uint64_t i = 0; i < entries && !r.bad; i++) {
        uint32_t id = uint32_t(r.read(version < 1 ? 2 : 4));
        uint64_t associations = r.read(1);
        for (uint64_t j = 0; j < associations && !r.bad; j++) {
          uint64_t index = (flags & 1) ? r.read(2) & 0x7FFF : r.read(1) & 0x7F;
          if (index == 0 || index > properties.size()) continue;
          const Box &property = properties[index - 1];
          if (std::memcmp(property.type, "ispe", 4) != 0) continue;
          Reader p(data + property.start, property.end - property.start);
          p.read(4);
          uint64_t width = p.read(4), height = p.read(4);
          if (!p.bad) declared[id] = {width, height};
        }
      }
    }
  }

  // Where each item's data starts (iloc, construction method 0: offsets in the file).
  const Box *iloc = find(inside, "iloc");
  if (!iloc) return true;
  Reader r(data + iloc->start, iloc->end - iloc->start);
  int version = int(r.read(1));
  r.read(3);
  uint64_t sizes = r.read(2);
  size_t offset_size = (sizes >> 12) & 0xF, length_size = (sizes >> 8) & 0xF, base_size = (sizes >> 4) & 0xF;
  size_t index_size = version >= 1 ? sizes & 0xF : 0;
  uint64_t items = r.read(version < 2 ? 2 : 4);
  for (uint64_t i = 0; i < items && !r.bad; i++) {
    uint32_t id = uint32_t(r.read(version < 2 ? 2 : 4));
    int method = version >= 1 ? int(r.read(2) & 0xF) : 0;
    r.read(2);  // data_reference_index
    uint64_t base = r.read(base_size);
    uint64_t extents = r.read(2);
    // Extents of zero-width fields read nothing: without this a small file could loop for long.
    if (offset_size + length_size + index_size == 0) extents = std::min<uint64_t>(extents, 1);
    for (uint64_t j = 0; j < extents && !r.bad; j++) {
      r.read(index_size);
      uint64_t offset = r.read(offset_size), length = r.read(length_size);
      if (j != 0 || method != 0 || !is_av1[id] || !declared.count(id)) continue;
      uint64_t start = base + offset;
      if (start >= size) continue;
      uint64_t available = size - start;
      if (length == 0 || length > available) length = available;
      auto coded = av1_frame_size(data + start, size_t(length));
      if (coded && *coded != declared[id]) return false;
    }
  }
  return true;
}

}  // namespace matte
