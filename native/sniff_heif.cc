#include "sniff_heif.h"

#include "bit_reader.h"
#include "sniff_hevc.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
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
  size_t left() const { return pos < size ? size - pos : 0; }
};

struct HeifBox {
  char type[4];
  size_t start, end;  // the payload
};

// The boxes in [begin, end): each as {type, payload}; stops at the first malformed one.
std::vector<HeifBox> boxes(const uint8_t *data, size_t begin, size_t end) {
  std::vector<HeifBox> out;
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
    HeifBox box;
    std::memcpy(box.type, data + pos + 4, 4);
    box.start = pos + header;
    box.end = pos + size_t(length);
    out.push_back(box);
    pos = box.end;
  }
  return out;
}

bool is(const HeifBox &box, const char *type) { return std::memcmp(box.type, type, 4) == 0; }

const HeifBox *find(const std::vector<HeifBox> &list, const char *type) {
  for (const HeifBox &box : list)
    if (is(box, type)) return &box;
  return nullptr;
}

using HeifSize = std::pair<uint64_t, uint64_t>;

// What the parameter sets of one item (AV1 sequence headers, HEVC SPSs) declare, over all of them.
struct CodedSizes {
  bool any = false, unreadable = false, mixed = false;
  HeifSize picture{0, 0};  // what the decoder outputs (for HEVC, inside the conformance window)
  HeifSize coded{0, 0};    // the largest picture it allocates
  void add(std::optional<HeifSize> out, std::optional<HeifSize> allocated) {
    if (!out || !allocated) {
      unreadable = true;
      return;
    }
    if (any && *out != picture) mixed = true;
    picture = *out;
    coded = {std::max(coded.first, allocated->first), std::max(coded.second, allocated->second)};
    any = true;
  }
};

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

// max_frame_width/height of an AV1 sequence header OBU's payload (AV1 spec 5.5.1).
std::optional<HeifSize> sequence_header_size(const uint8_t *data, size_t size) {
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
  return HeifSize{width, height};
}

// Every sequence header among the OBUs in [data, data + size), the stream libheif hands the AV1
// decoder: the av1C's configOBUs, then the item's data.
void add_sequence_headers(const uint8_t *data, size_t size, CodedSizes &sizes) {
  Reader r(data, size);
  while (!r.bad && r.left() > 0) {
    uint64_t header = r.read(1);
    int type = int((header >> 3) & 0x0F);
    if (header & 0x04) r.read(1);  // extension
    // Without a size field, an OBU runs to the end of the data.
    uint64_t length = (header & 0x02) ? leb128(r) : r.left();
    if (r.bad || length > r.left()) return;  // the decoder stops there too
    if (type == 1) {
      auto frame = sequence_header_size(data + r.pos, size_t(length));
      sizes.add(frame, frame);
    }
    r.pos += size_t(length);
  }
}

void add_sps(const uint8_t *nal, size_t size, CodedSizes &sizes) {
  if (!is_hevc_base_sps(nal, size)) return;
  std::optional<HevcPictureSize> sps = hevc_sps_size(nal, size);
  if (!sps) return sizes.add(std::nullopt, std::nullopt);
  sizes.add(HeifSize{sps->width, sps->height}, HeifSize{sps->coded_width, sps->coded_height});
}

// Every SPS in an hvcC (HEVCDecoderConfigurationRecord: 22 bytes, then arrays of NAL units).
void add_hvcC_parameter_sets(const uint8_t *data, size_t size, CodedSizes &sizes) {
  Reader r(data, size);
  r.read(22);
  uint64_t arrays = r.read(1);
  for (uint64_t i = 0; i < arrays && !r.bad; i++) {
    r.read(1);  // array_completeness, NAL_unit_type
    uint64_t units = r.read(2);
    for (uint64_t j = 0; j < units && !r.bad; j++) {
      uint64_t length = r.read(2);
      if (r.bad || length > r.left()) return;
      add_sps(data + r.pos, size_t(length), sizes);
      r.pos += size_t(length);
    }
  }
}

// Every SPS in an item's data: NAL units each after a 4-byte length, as libheif 1.15 reads them.
void add_item_parameter_sets(const uint8_t *data, size_t size, CodedSizes &sizes) {
  Reader r(data, size);
  while (r.left() >= 4) {
    uint64_t length = r.read(4);
    if (length > r.left()) return;  // libheif refuses the item there
    add_sps(data + r.pos, size_t(length), sizes);
    r.pos += size_t(length);
  }
}

enum class Codec { Other, Av1, Hevc };

struct Span {
  const uint8_t *data;
  size_t size;
};

// The spans as one buffer: the only one in place, several copied into `joined`.
Span join(const std::vector<Span> &spans, std::vector<uint8_t> &joined) {
  if (spans.size() == 1) return spans.front();
  for (const Span &span : spans) joined.insert(joined.end(), span.data, span.data + span.size);
  return {joined.data(), joined.size()};
}

// HEVC pictures are coded in blocks of up to 64x64: an encoder pads the picture up to them and
// crops the padding with the conformance window.
const uint64_t kLargestHevcBlock = 64;

HeifFrames judge(Codec codec, const CodedSizes &sizes, const HeifSize &declared) {
  if (sizes.unreadable) return HeifFrames::Unreadable;
  if (!sizes.any) return HeifFrames::Match;  // no parameter set: the decoder decodes nothing
  if (sizes.mixed || sizes.picture != declared) return HeifFrames::SizeDiffers;
  if (codec == Codec::Hevc && (sizes.coded.first - declared.first >= kLargestHevcBlock ||
                               sizes.coded.second - declared.second >= kLargestHevcBlock))
    return HeifFrames::SizeDiffers;
  return HeifFrames::Match;
}

}  // namespace

HeifFrames heif_frames_check(const uint8_t *data, size_t size) {
  std::vector<HeifBox> top = boxes(data, 0, size);
  const HeifBox *meta = find(top, "meta");
  if (!meta || meta->end - meta->start < 4) return HeifFrames::Match;
  std::vector<HeifBox> inside = boxes(data, meta->start + 4, meta->end);  // after the full box's version/flags

  // Item types (iinf / infe version 2 or 3).
  std::map<uint32_t, Codec> codec;
  if (const HeifBox *iinf = find(inside, "iinf")) {
    Reader r(data + iinf->start, iinf->end - iinf->start);
    int version = int(r.read(1));
    r.read(3);
    r.read(version == 0 ? 2 : 4);  // entry_count
    for (const HeifBox &infe : boxes(data, iinf->start + r.pos, iinf->end)) {
      if (!is(infe, "infe")) continue;
      Reader e(data + infe.start, infe.end - infe.start);
      int infe_version = int(e.read(1));
      e.read(3);
      if (infe_version < 2) continue;
      uint32_t id = uint32_t(e.read(infe_version == 2 ? 2 : 4));
      e.read(2);  // item_protection_index
      if (e.bad || e.left() < 4) continue;
      const uint8_t *type = data + infe.start + e.pos;
      codec[id] = std::memcmp(type, "av01", 4) == 0 ? Codec::Av1 : std::memcmp(type, "hvc1", 4) == 0 ? Codec::Hevc : Codec::Other;
    }
  }

  // Properties (ipco) and which item has which (ipma): each item's ispe (an item with two that
  // differ is ambiguous) and its codec configuration (the first hvcC or av1C, as libheif takes it).
  std::map<uint32_t, HeifSize> declared;
  std::set<uint32_t> ambiguous;
  std::map<uint32_t, const HeifBox *> hvcC, av1C;
  std::vector<HeifBox> properties;
  if (const HeifBox *iprp = find(inside, "iprp")) {
    std::vector<HeifBox> parts = boxes(data, iprp->start, iprp->end);
    if (const HeifBox *ipco = find(parts, "ipco")) properties = boxes(data, ipco->start, ipco->end);
    for (const HeifBox &ipma : parts) {
      if (!is(ipma, "ipma")) continue;
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
          const HeifBox &property = properties[index - 1];
          if (is(property, "hvcC") && !hvcC.count(id)) hvcC[id] = &property;
          if (is(property, "av1C") && !av1C.count(id)) av1C[id] = &property;
          if (!is(property, "ispe")) continue;
          Reader p(data + property.start, property.end - property.start);
          p.read(4);
          uint64_t width = p.read(4), height = p.read(4);
          if (p.bad) continue;
          if (declared.count(id) && declared[id] != HeifSize{width, height}) ambiguous.insert(id);
          declared[id] = {width, height};
        }
      }
    }
  }

  // Each item's data (iloc): extents in the file (construction method 0) or in idat (1).
  const HeifBox *iloc = find(inside, "iloc");
  if (!iloc) return HeifFrames::Match;
  const HeifBox *idat = find(inside, "idat");
  // The bytes read for the items judged: in any file an encoder writes, items do not share data,
  // so more than the file's size can only be extents repeated to make this check slow.
  size_t budget = size;
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
    // Where the extents' offsets count from: the file, or idat's payload.
    const uint8_t *source = method == 1 && idat ? data + idat->start : data;
    size_t source_size = method == 1 ? (idat ? idat->end - idat->start : 0) : size;
    bool judged = method <= 1 && codec.count(id) && codec[id] != Codec::Other;
    std::vector<Span> spans;
    for (uint64_t j = 0; j < extents && !r.bad; j++) {
      r.read(index_size);
      uint64_t offset = r.read(offset_size), length = r.read(length_size);
      if (!judged || base > source_size || offset > source_size - base) continue;
      uint64_t start = base + offset, available = source_size - start;
      if (length == 0 || length > available) length = available;
      if (length > budget) return HeifFrames::DataOverlaps;
      budget -= size_t(length);
      spans.push_back({source + start, size_t(length)});
    }
    if (!judged || r.bad) continue;
    // libheif 1.15 decodes a grid's tile without one, at whatever size its stream declares.
    if (!declared.count(id)) return HeifFrames::Undeclared;
    if (ambiguous.count(id)) return HeifFrames::SizeDiffers;

    CodedSizes coded;
    if (codec[id] == Codec::Hevc) {
      if (hvcC.count(id)) {
        size_t length = hvcC[id]->end - hvcC[id]->start;
        if (length > budget) return HeifFrames::DataOverlaps;
        budget -= length;
        add_hvcC_parameter_sets(data + hvcC[id]->start, length, coded);
      }
      std::vector<uint8_t> joined;
      if (!spans.empty()) {
        Span item = join(spans, joined);
        add_item_parameter_sets(item.data, item.size, coded);
      }
    } else {
      // The av1C's configOBUs (after its 4 bytes) and the item's data are one stream of OBUs.
      if (av1C.count(id) && av1C[id]->end - av1C[id]->start > 4) {
        size_t obus = av1C[id]->end - av1C[id]->start - 4;
        if (obus > budget) return HeifFrames::DataOverlaps;
        budget -= obus;
        spans.insert(spans.begin(), Span{data + av1C[id]->start + 4, obus});
      }
      std::vector<uint8_t> joined;
      if (!spans.empty()) {
        Span stream = join(spans, joined);
        add_sequence_headers(stream.data, stream.size, coded);
      }
    }
    HeifFrames verdict = judge(codec[id], coded, declared[id]);
    if (verdict != HeifFrames::Match) return verdict;
  }
  return HeifFrames::Match;
}

}  // namespace matte
