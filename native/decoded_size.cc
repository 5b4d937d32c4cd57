#include "decoded_size.h"

#include "errors.h"
#include "sniff_heif.h"
#include "steps/operations.h"

#include <algorithm>
#include <string>

namespace matte {

namespace {

// TIFF tiles are multiples of 16 on each side, and writers use 128..1024 whatever the image size
// (libvips writes a 10x10 image in 128x128 tiles): a tile past both bounds only serves to make
// libtiff decode far more than the image holds.
const uint64_t kTileGrid = 16;
const uint64_t kLargestOrdinaryTile = 1024;

uint64_t round_up(uint64_t value, uint64_t step) { return step ? (value + step - 1) / step * step : value; }

// The area the decoder writes, over the limits the header's area is held to (load.cc).
void check_area(const char *what, uint64_t width, uint64_t height, const Declared &declared, const Limits &limits) {
  double pixels = double(width) * double(height) * double(declared.frames);
  double bytes = pixels * double(declared.bytes_per_pixel);
  double budget = double(limits.max_pixels) * kDecodedBytesPerPixel;
  if (pixels > double(limits.max_pixels) || bytes > budget)
    throw image_too_large(std::string(what) + " " + size_text(width, height) + " pixels for a " +
                          size_text(declared.width, declared.height) + " image: " + std::to_string(uint64_t(bytes)) +
                          " bytes decoded, more than the limit of " + std::to_string(uint64_t(budget)) + " bytes");
}

void check_tiff(const uint8_t *data, size_t size, const Declared &declared, const Limits &limits) {
  std::optional<TiffLayout> layout = tiff_layout(data, size);
  if (!layout || !layout->chunk_width || !layout->chunk_height) return;  // libtiff refuses it itself
  uint64_t tile_w = layout->chunk_width, tile_h = layout->chunk_height;
  if (layout->tiled && ((tile_w > std::max(round_up(layout->width, kTileGrid), kLargestOrdinaryTile)) ||
                        (tile_h > std::max(round_up(layout->height, kTileGrid), kLargestOrdinaryTile))))
    throw unsupported_image("the tiff image's tiles (" + size_text(tile_w, tile_h) + ") are far larger than the image (" +
                            size_text(layout->width, layout->height) + ")");
  // A JPEG inside a strip or tile is decoded at its own frame size.
  if (layout->compression == 6 || layout->compression == 7) {
    for (size_t i = 0; i < layout->offsets.size() && i < layout->counts.size(); i++) {
      if (layout->offsets[i] >= size) continue;
      size_t length = size_t(std::min<uint64_t>(layout->counts[i], size - layout->offsets[i]));
      auto frame = jpeg_frame_size(data + layout->offsets[i], length);
      if (frame && (frame->first > tile_w || frame->second > tile_h))
        throw unsupported_image("the tiff image holds a " + size_text(frame->first, frame->second) +
                                " JPEG in a " + size_text(tile_w, tile_h) + (layout->tiled ? " tile" : " strip"));
    }
  }
  // libtiff decodes whole tiles: the image padded up to them is what is decoded.
  uint64_t bits = std::max<uint64_t>(layout->bits_per_sample, 8);
  Declared counted = declared;
  counted.bytes_per_pixel = std::max(declared.bytes_per_pixel, layout->samples * ((bits + 7) / 8));
  check_area("the tiff image's tiles or strips decode", round_up(std::max<uint64_t>(declared.width, 1), tile_w),
             round_up(std::max<uint64_t>(declared.height, 1), tile_h), counted, limits);
}

}  // namespace

void check_decoded_size(ImageType type, const uint8_t *data, size_t size, const Declared &declared,
                        const Limits &limits) {
  switch (type) {
    case ImageType::Tiff: return check_tiff(data, size, declared, limits);
    case ImageType::Gif: {
      // libnsgif grows its canvas to the first frame; the box every frame reaches bounds it.
      GifLayout layout = gif_layout(data, size);
      if (layout.extent_width > declared.width || layout.extent_height > declared.height)
        check_area("the gif image's frames reach", std::max<uint64_t>(layout.extent_width, declared.width),
                   std::max<uint64_t>(layout.extent_height, declared.height), declared, limits);
      return;
    }
    case ImageType::Webp:
      if (!webp_frames_match_headers(data, size))
        throw unsupported_image("the webp image holds a frame whose size differs from the size its header declares");
      return;
    case ImageType::Heif:
      switch (heif_frames_check(data, size)) {
        case HeifFrames::Match: return;
        case HeifFrames::SizeDiffers:
          throw unsupported_image("the heif image holds a frame whose coded size differs from its declared size (ispe)");
        case HeifFrames::Undeclared:
          throw unsupported_image("the heif image holds an image item without a declared size (ispe)");
        case HeifFrames::Unreadable:
          throw unsupported_image("the heif image holds a parameter set (HEVC SPS or AV1 sequence header) that cannot be read");
        case HeifFrames::DataOverlaps:
          throw unsupported_image("the heif image's items refer to more data than the file holds");
      }
      return;
    case ImageType::Jpeg: {
      // A progressive (or multi-scan) JPEG is held whole as coefficients, 2 bytes each, whatever
      // the scale it is decoded at: more than its decoded pixels for 4:4:4.
      double coefficients = double(jpeg_coefficient_bytes(data, size));
      double budget = double(limits.max_pixels) * kDecodedBytesPerPixel;
      if (coefficients > budget)
        throw image_too_large("the progressive jpeg image holds " + std::to_string(uint64_t(coefficients)) +
                              " bytes of coefficients while it decodes, more than the limit of " +
                              std::to_string(uint64_t(budget)) + " bytes");
      return;
    }
    case ImageType::Png:
      return;  // libpng decodes the frame its header declares, which libvips reports
  }
}

}  // namespace matte
