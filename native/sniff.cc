#include "sniff.h"

#include <cstring>
#include <vector>

namespace matte {

const char *type_name(ImageType type) {
  switch (type) {
    case ImageType::Jpeg: return "jpeg";
    case ImageType::Png: return "png";
    case ImageType::Gif: return "gif";
    case ImageType::Webp: return "webp";
    case ImageType::Heif: return "heif";
    case ImageType::Tiff: return "tiff";
  }
  return "unknown";
}

static bool starts_with(const uint8_t *data, size_t size, const char *magic, size_t n, size_t at = 0) {
  return size >= at + n && std::memcmp(data + at, magic, n) == 0;
}

static uint32_t le32(const uint8_t *p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (uint32_t(p[3]) << 24); }

std::optional<ImageType> sniff(const uint8_t *data, size_t size) {
  if (starts_with(data, size, "\xFF\xD8\xFF", 3)) return ImageType::Jpeg;
  if (starts_with(data, size, "\x89PNG\r\n\x1A\n", 8)) return ImageType::Png;
  if (starts_with(data, size, "GIF87a", 6) || starts_with(data, size, "GIF89a", 6)) return ImageType::Gif;
  if (starts_with(data, size, "RIFF", 4) && starts_with(data, size, "WEBP", 4, 8)) return ImageType::Webp;
  if (starts_with(data, size, "II*\0", 4) || starts_with(data, size, "MM\0*", 4)) return ImageType::Tiff;
  // ISO BMFF: [size]["ftyp"][major brand]; HEIF and AVIF brands only.
  if (starts_with(data, size, "ftyp", 4, 4) && size >= 12) {
    static const char *brands[] = {"avif", "avis", "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"};
    for (const char *brand : brands)
      if (std::memcmp(data + 8, brand, 4) == 0) return ImageType::Heif;
  }
  return std::nullopt;
}

// Skips a chain of GIF data sub-blocks starting at pos; returns the position after the
// terminator, or 0 when the chain runs past the end.
static size_t skip_sub_blocks(const uint8_t *data, size_t size, size_t pos) {
  while (pos < size) {
    uint8_t len = data[pos];
    pos += 1;
    if (len == 0) return pos;
    pos += len;
  }
  return 0;
}

int gif_frame_count(const uint8_t *data, size_t size) {
  if (size < 13) return -1;
  size_t pos = 13;
  uint8_t flags = data[10];
  if (flags & 0x80) pos += 3u * (1u << ((flags & 0x07) + 1));  // global colour table
  int frames = 0;
  while (pos < size) {
    uint8_t block = data[pos];
    if (block == 0x3B) break;  // trailer
    if (block == 0x21) {       // extension: label, then sub-blocks
      if (pos + 2 > size) break;
      size_t next = skip_sub_blocks(data, size, pos + 2);
      if (!next) break;
      pos = next;
    } else if (block == 0x2C) {  // image descriptor
      if (pos + 10 > size) break;
      uint8_t image_flags = data[pos + 9];
      pos += 10;
      if (image_flags & 0x80) pos += 3u * (1u << ((image_flags & 0x07) + 1));  // local colour table
      pos += 1;                                                                // LZW minimum code size
      frames += 1;
      size_t next = skip_sub_blocks(data, size, pos);
      if (!next) break;
      pos = next;
    } else {
      break;  // garbage: the decoder decides what it can still show
    }
  }
  return frames > 0 ? frames : -1;
}

int webp_frame_count(const uint8_t *data, size_t size) {
  if (size < 12) return -1;
  size_t end = std::min<size_t>(size, size_t(le32(data + 4)) + 8);
  size_t pos = 12;
  int frames = 0;
  bool animated = false;
  while (pos + 8 <= end) {
    const uint8_t *chunk = data + pos;
    uint32_t length = le32(chunk + 4);
    if (std::memcmp(chunk, "ANIM", 4) == 0) animated = true;
    if (std::memcmp(chunk, "ANMF", 4) == 0) frames += 1;
    pos += 8 + size_t(length) + (length & 1);
  }
  if (!animated) return 1;
  return frames > 0 ? frames : -1;
}

bool tiff_data_within_file(const uint8_t *data, size_t size) {
  if (size < 8) return false;
  bool little = data[0] == 'I';
  auto u16 = [&](size_t at) -> uint32_t {
    return little ? data[at] | (data[at + 1] << 8) : (data[at] << 8) | data[at + 1];
  };
  auto u32 = [&](size_t at) -> uint32_t {
    return little ? le32(data + at)
                  : (uint32_t(data[at]) << 24) | (data[at + 1] << 16) | (data[at + 2] << 8) | data[at + 3];
  };
  uint32_t ifd = u32(4);
  if (ifd < 8 || size_t(ifd) + 2 > size) return false;
  uint32_t entries = u16(ifd);
  if (size_t(ifd) + 2 + size_t(entries) * 12 > size) return false;

  // Reads the values of one tag (SHORT or LONG), inline or at an offset.
  auto values = [&](size_t entry) -> std::vector<uint64_t> {
    uint32_t type = u16(entry + 2);
    uint32_t count = u32(entry + 4);
    size_t width = type == 3 ? 2 : type == 4 ? 4 : 0;
    std::vector<uint64_t> out;
    if (!width || count > size) return out;
    size_t at = count * width <= 4 ? entry + 8 : u32(entry + 8);
    if (at + size_t(count) * width > size) return out;
    out.reserve(count);
    for (uint32_t i = 0; i < count; i++) out.push_back(width == 2 ? u16(at + i * 2) : u32(at + i * 4));
    return out;
  };

  std::vector<uint64_t> offsets, counts;
  for (uint32_t i = 0; i < entries; i++) {
    size_t entry = ifd + 2 + size_t(i) * 12;
    uint32_t tag = u16(entry);
    if (tag == 273 || tag == 324) offsets = values(entry);  // StripOffsets, TileOffsets
    if (tag == 279 || tag == 325) counts = values(entry);   // StripByteCounts, TileByteCounts
  }
  if (offsets.empty() || offsets.size() != counts.size()) return false;
  for (size_t i = 0; i < offsets.size(); i++)
    if (offsets[i] + counts[i] > size) return false;
  return true;
}

}  // namespace matte
