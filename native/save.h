// Encoding: one small function per output format, all writing 8-bit sRGB without metadata.
#pragma once

#include "frames.h"
#include "plan.h"

#include <cstddef>
#include <optional>

namespace matte {

struct Encoded {
  void *data;  // g_malloc'ed by libvips; the addon hands it to JS and frees it with g_free
  size_t size;
  int width;
  int height;  // of one frame
  int frames;
  Format format;                 // what `auto` became
  std::optional<Box> foreground;  // the subject's box in the result, when the job removed a background
};

class Budget;

/**
 * `budget` (may be null) also stops the encodes libvips' savers did not let it reach (WebP, GIF:
 * encode/webp.h, encode/webp_anim.h, encode/gif.h).
 */
Encoded save(const Frames &frames, Format format, int quality, Budget *budget = nullptr);

}  // namespace matte
