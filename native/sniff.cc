#include "sniff.h"

#include <algorithm>
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

GifLayout gif_layout(const uint8_t *data, size_t size) {
  GifLayout layout;
  if (size < 13) return layout;
  layout.screen_width = layout.extent_width = data[6] | (data[7] << 8);
  layout.screen_height = layout.extent_height = data[8] | (data[9] << 8);
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
      auto u16 = [&](size_t at) { return uint32_t(data[at] | (data[at + 1] << 8)); };
      layout.extent_width = std::max(layout.extent_width, u16(pos + 1) + u16(pos + 5));
      layout.extent_height = std::max(layout.extent_height, u16(pos + 3) + u16(pos + 7));
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
  layout.frames = frames > 0 ? frames : -1;
  return layout;
}

int gif_frame_count(const uint8_t *data, size_t size) { return gif_layout(data, size).frames; }

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

static uint32_t le24(const uint8_t *p) { return p[0] | (p[1] << 8) | (uint32_t(p[2]) << 16); }

// The size a VP8 or VP8L bitstream decodes to, from its own header; {0, 0} when it is too short.
static std::pair<uint32_t, uint32_t> webp_bitstream_size(const uint8_t *chunk, size_t length, bool lossless) {
  const uint8_t *p = chunk + 8;
  if (!lossless && length >= 10 && p[3] == 0x9D && p[4] == 0x01 && p[5] == 0x2A)
    return {(p[6] | (p[7] << 8)) & 0x3FFF, (p[8] | (p[9] << 8)) & 0x3FFF};
  if (lossless && length >= 5 && p[0] == 0x2F) {
    uint32_t bits = le32(p + 1);
    return {(bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1};
  }
  return {0, 0};
}

bool webp_frames_match_headers(const uint8_t *data, size_t size) {
  if (size < 12) return true;
  size_t end = std::min<size_t>(size, size_t(le32(data + 4)) + 8);
  bool extended = false;
  uint32_t canvas_width = 0, canvas_height = 0;
  // Checks the VP8/VP8L chunks in [pos, stop) against the size that declares them.
  auto bitstreams_match = [&](size_t pos, size_t stop, uint32_t width, uint32_t height) {
    while (pos + 8 <= stop) {
      const uint8_t *chunk = data + pos;
      uint32_t length = le32(chunk + 4);
      size_t available = std::min<size_t>(length, stop - pos - 8);
      bool vp8 = std::memcmp(chunk, "VP8 ", 4) == 0, vp8l = std::memcmp(chunk, "VP8L", 4) == 0;
      if (vp8 || vp8l) {
        auto [w, h] = webp_bitstream_size(chunk, available, vp8l);
        if (w && (w != width || h != height)) return false;
      }
      pos += 8 + size_t(length) + (length & 1);
    }
    return true;
  };
  size_t pos = 12;
  while (pos + 8 <= end) {
    const uint8_t *chunk = data + pos;
    uint32_t length = le32(chunk + 4);
    size_t stop = std::min<size_t>(end, pos + 8 + size_t(length));
    if (std::memcmp(chunk, "VP8X", 4) == 0 && stop - pos >= 18) {
      extended = true;
      canvas_width = le24(chunk + 12) + 1;
      canvas_height = le24(chunk + 15) + 1;
    }
    if (extended && (std::memcmp(chunk, "VP8 ", 4) == 0 || std::memcmp(chunk, "VP8L", 4) == 0) &&
        !bitstreams_match(pos, stop, canvas_width, canvas_height))
      return false;
    if (std::memcmp(chunk, "ANMF", 4) == 0 && stop - pos >= 24) {
      const uint8_t *frame = chunk + 8;
      uint32_t x = 2 * le24(frame), y = 2 * le24(frame + 3);
      uint32_t width = le24(frame + 6) + 1, height = le24(frame + 9) + 1;
      if (!extended || x + width > canvas_width || y + height > canvas_height) return false;
      if (!bitstreams_match(pos + 24, stop, width, height)) return false;
    }
    pos += 8 + size_t(length) + (length & 1);
  }
  return true;
}

std::optional<TiffLayout> tiff_layout(const uint8_t *data, size_t size) {
  if (size < 8) return std::nullopt;
  bool little = data[0] == 'I';
  auto u16 = [&](size_t at) -> uint32_t {
    return little ? data[at] | (data[at + 1] << 8) : (data[at] << 8) | data[at + 1];
  };
  auto u32 = [&](size_t at) -> uint32_t {
    return little ? le32(data + at)
                  : (uint32_t(data[at]) << 24) | (data[at + 1] << 16) | (data[at + 2] << 8) | data[at + 3];
  };
  uint32_t ifd = u32(4);
  if (ifd < 8 || size_t(ifd) + 2 > size) return std::nullopt;
  uint32_t entries = u16(ifd);
  if (size_t(ifd) + 2 + size_t(entries) * 12 > size) return std::nullopt;

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
  auto first = [&](size_t entry, uint64_t otherwise) {
    std::vector<uint64_t> v = values(entry);
    return v.empty() ? otherwise : v.front();
  };

  TiffLayout layout;
  uint64_t rows_per_strip = UINT32_MAX;  // the default: one strip
  for (uint32_t i = 0; i < entries; i++) {
    size_t entry = ifd + 2 + size_t(i) * 12;
    switch (u16(entry)) {
      case 256: layout.width = first(entry, 0); break;
      case 257: layout.height = first(entry, 0); break;
      case 258: {  // BitsPerSample, one value a sample: the widest counts
        for (uint64_t bits : values(entry)) layout.bits_per_sample = std::max(layout.bits_per_sample, bits);
        break;
      }
      case 259: layout.compression = uint32_t(first(entry, 1)); break;
      case 277: layout.samples = first(entry, 1); break;
      case 278: rows_per_strip = first(entry, UINT32_MAX); break;
      case 322: layout.chunk_width = first(entry, 0), layout.tiled = true; break;
      case 323: layout.chunk_height = first(entry, 0), layout.tiled = true; break;
      case 273: case 324: layout.offsets = values(entry); break;  // StripOffsets, TileOffsets
      case 279: case 325: layout.counts = values(entry); break;   // StripByteCounts, TileByteCounts
    }
  }
  // A strip is as wide as the image and libtiff clamps its rows to the image's.
  if (!layout.tiled) {
    layout.chunk_width = layout.width;
    layout.chunk_height = std::min(rows_per_strip, layout.height);
  }
  return layout;
}

bool tiff_data_within_file(const uint8_t *data, size_t size) {
  std::optional<TiffLayout> layout = tiff_layout(data, size);
  if (!layout || layout->offsets.empty() || layout->offsets.size() != layout->counts.size()) return false;
  for (size_t i = 0; i < layout->offsets.size(); i++)
    if (layout->offsets[i] + layout->counts[i] > size) return false;
  return true;
}

uint64_t jpeg_coefficient_bytes(const uint8_t *data, size_t size) {
  if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return 0;
  size_t pos = 2;
  bool progressive = false;
  int components = 0;
  uint64_t width = 0, height = 0, bytes = 0;
  while (pos + 4 <= size) {
    if (data[pos] != 0xFF) return 0;
    uint8_t marker = data[pos + 1];
    if (marker == 0xFF) {
      pos += 1;
      continue;
    }
    size_t length = (size_t(data[pos + 2]) << 8) | data[pos + 3];
    const uint8_t *p = data + pos + 4;
    if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
      if (pos + 10 > size) return 0;
      progressive = marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE;
      height = (uint64_t(p[1]) << 8) | p[2];
      width = (uint64_t(p[3]) << 8) | p[4];
      components = p[5];
      if (pos + 10 + size_t(components) * 3 > size) return 0;
      int h_max = 1, v_max = 1;
      for (int i = 0; i < components; i++) {
        h_max = std::max(h_max, p[7 + i * 3] >> 4);
        v_max = std::max(v_max, p[7 + i * 3] & 0x0F);
      }
      // Each component's blocks, rounded up to whole MCUs, 64 coefficients of 2 bytes a block.
      uint64_t mcu_cols = (width + 8 * h_max - 1) / (8 * h_max), mcu_rows = (height + 8 * v_max - 1) / (8 * v_max);
      for (int i = 0; i < components; i++)
        bytes += mcu_cols * (p[7 + i * 3] >> 4) * mcu_rows * (p[7 + i * 3] & 0x0F) * 64 * 2;
    }
    if (marker == 0xDA) {  // the first scan: fewer components than the frame means several scans
      if (pos + 5 > size) return 0;
      return progressive || p[0] < components ? bytes : 0;
    }
    if (marker == 0xD9) return 0;
    pos += 2 + length;
  }
  return 0;
}

std::optional<std::pair<uint32_t, uint32_t>> jpeg_frame_size(const uint8_t *data, size_t size) {
  if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return std::nullopt;
  size_t pos = 2;
  while (pos + 4 <= size) {
    if (data[pos] != 0xFF) return std::nullopt;
    uint8_t marker = data[pos + 1];
    if (marker == 0xFF) {  // fill byte
      pos += 1;
      continue;
    }
    size_t length = (size_t(data[pos + 2]) << 8) | data[pos + 3];
    // SOF0..SOF15, except DHT (C4), JPG (C8) and DAC (CC): precision, height, width.
    if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
      if (pos + 9 > size) return std::nullopt;
      uint32_t height = (uint32_t(data[pos + 5]) << 8) | data[pos + 6];
      uint32_t width = (uint32_t(data[pos + 7]) << 8) | data[pos + 8];
      return std::make_pair(width, height);
    }
    if (marker == 0xDA || marker == 0xD9) return std::nullopt;  // scan data or end before any frame
    pos += 2 + length;
  }
  return std::nullopt;
}

}  // namespace matte
