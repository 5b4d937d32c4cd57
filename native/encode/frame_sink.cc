#include "frame_sink.h"

#include "../errors.h"

#include <cstring>
#include <exception>
#include <string>
#include <vector>

using vips::VImage;

namespace matte {

namespace {

struct Assembly {
  const std::function<void(uint8_t *, int)> *frame = nullptr;
  size_t row_bytes = 0;
  int page_height = 0;
  std::vector<uint8_t> pixels;  // the frame being filled
  int row = 0;                  // rows of it filled
  int index = 0;
  std::exception_ptr failure;
};

// Called by vips_sink_disc with each strip of rows, in order, on one thread at a time.
int take_rows(VipsRegion *region, VipsRect *area, void *user) {
  auto *a = static_cast<Assembly *>(user);
  try {
    for (int y = area->top; y < VIPS_RECT_BOTTOM(area); y++) {
      std::memcpy(a->pixels.data() + size_t(a->row) * a->row_bytes, VIPS_REGION_ADDR(region, 0, y), a->row_bytes);
      if (++a->row < a->page_height) continue;
      (*a->frame)(a->pixels.data(), a->index++);
      a->row = 0;
    }
    return 0;
  } catch (...) {
    a->failure = std::current_exception();
    return -1;
  }
}

}  // namespace

VImage srgb8(VImage image) {
  VipsInterpretation type = image.interpretation();
  if (image.bands() < 3 || type == VIPS_INTERPRETATION_RGB16 || type == VIPS_INTERPRETATION_GREY16)
    image = image.colourspace(VIPS_INTERPRETATION_sRGB);
  if (image.format() != VIPS_FORMAT_UCHAR) image = image.cast(VIPS_FORMAT_UCHAR);
  return image;
}

void sink_frames(const VImage &image, int page_height, const std::function<void(uint8_t *, int)> &frame) {
  if (page_height < 1 || image.height() % page_height)
    throw Error("internal", "the frames are " + std::to_string(page_height) + " rows high in an image of " +
                                std::to_string(image.height()));
  Assembly a;
  a.frame = &frame;
  a.row_bytes = size_t(VIPS_IMAGE_SIZEOF_LINE(image.get_image()));
  a.page_height = page_height;
  a.pixels.resize(a.row_bytes * size_t(page_height));
  int failed = vips_sink_disc(image.get_image(), take_rows, &a);
  // libvips 8.14's sink reports a failure of the last strip's callback as success: the callback's
  // own record is what says it failed.
  if (a.failure) {
    vips_error_clear();  // the sink's own line, if any, says only that the callback failed
    std::rethrow_exception(a.failure);
  }
  if (failed) throw vips::VError();
  if (a.index * page_height != image.height()) throw Error("internal", "the sink ended before the last frame");
}

}  // namespace matte
