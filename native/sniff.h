// Recognising an input by its content, and reading the few structural facts that limits depend
// on straight from the file (frame counts, TIFF strip bounds) instead of trusting a decoder's
// word: Debian's libvips 8.14 stops counting GIF frames at 4096 and decodes a TIFF whose strips
// lie past the end of the file to black with only a warning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace matte {

/** The accepted input types: an allow-list, so no other libvips loader ever runs. */
enum class ImageType { Jpeg, Png, Gif, Webp, Heif, Tiff };

const char *type_name(ImageType type);

std::optional<ImageType> sniff(const uint8_t *data, size_t size);

/** Image descriptors in a GIF; -1 when the block structure is broken before the first one. */
int gif_frame_count(const uint8_t *data, size_t size);

/** ANMF chunks of an animated WebP, 1 for a still WebP, -1 for a broken RIFF structure. */
int webp_frame_count(const uint8_t *data, size_t size);

/** Whether every strip or tile of the first TIFF directory lies inside the file. */
bool tiff_data_within_file(const uint8_t *data, size_t size);

}  // namespace matte
