// Recognising an input by its content, and reading the few structural facts that limits depend
// on straight from the file (frame counts, TIFF strip bounds) instead of trusting a decoder's
// word: Debian's libvips 8.14 stops counting GIF frames at 4096 and decodes a TIFF whose strips
// lie past the end of the file to black with only a warning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace matte {

/** The accepted input types: an allow-list, so no other libvips loader ever runs. */
enum class ImageType { Jpeg, Png, Gif, Webp, Heif, Tiff };

const char *type_name(ImageType type);

std::optional<ImageType> sniff(const uint8_t *data, size_t size);

/** Image descriptors in a GIF; -1 when the block structure is broken before the first one. */
int gif_frame_count(const uint8_t *data, size_t size);

/**
 * A GIF's logical screen and the box its frames reach (their offset plus their size, which may
 * pass the screen: libnsgif grows its canvas to the first frame), with the frame count as above.
 */
struct GifLayout {
  int frames = -1;
  uint32_t screen_width = 0, screen_height = 0;
  uint32_t extent_width = 0, extent_height = 0;
};
GifLayout gif_layout(const uint8_t *data, size_t size);

/** ANMF chunks of an animated WebP, 1 for a still WebP, -1 for a broken RIFF structure. */
int webp_frame_count(const uint8_t *data, size_t size);

/**
 * Whether every VP8/VP8L bitstream decodes to the size that declares it: the canvas (VP8X) for a
 * still image, its ANMF frame for an animation frame, which must also lie inside the canvas.
 */
bool webp_frames_match_headers(const uint8_t *data, size_t size);

/** Whether every strip or tile of the first TIFF directory lies inside the file. */
bool tiff_data_within_file(const uint8_t *data, size_t size);

/**
 * The first TIFF directory's layout, the one libvips decodes: libtiff decodes a whole strip or
 * tile (`chunk_*`) at a time, and a tile may be far larger than the image.
 */
struct TiffLayout {
  uint64_t width = 0, height = 0;
  uint64_t samples = 1, bits_per_sample = 1;
  uint32_t compression = 1;
  bool tiled = false;
  uint64_t chunk_width = 0, chunk_height = 0;  // a tile, or a strip (image width x its rows)
  std::vector<uint64_t> offsets, counts;       // of every strip or tile
};
std::optional<TiffLayout> tiff_layout(const uint8_t *data, size_t size);

/**
 * The bytes libjpeg holds for a JPEG's whole coefficient image when it must buffer it (a progressive
 * frame, or a first scan with fewer components than the frame: several scans), else 0.
 */
uint64_t jpeg_coefficient_bytes(const uint8_t *data, size_t size);

/** Width and height in a JPEG stream's frame header (SOFn), if it has one before its first scan. */
std::optional<std::pair<uint32_t, uint32_t>> jpeg_frame_size(const uint8_t *data, size_t size);

}  // namespace matte
