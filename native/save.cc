#include "save.h"

#include "encode/avif.h"
#include "encode/gif.h"
#include "encode/png.h"
#include "encode/webp.h"
#include "encode/webp_anim.h"
#include "errors.h"

#include <string>
#include <vector>

using vips::VImage;

namespace matte {

namespace {

// One image holding every frame, top to bottom, with the animation metadata the encoders read.
VImage join_frames(const Frames &frames) {
  if (frames.count() == 1) {
    VImage out = frames.images.front().copy();
    out.remove(VIPS_META_PAGE_HEIGHT);
    return out;
  }
  VImage out = frames.is_strip() ? frames.images.front().copy()
                                 : VImage::arrayjoin(frames.images, VImage::option()->set("across", 1)).copy();
  out.set(VIPS_META_PAGE_HEIGHT, frames.height());
  out.set("delay", frames.delays);
  out.set("loop", frames.loop);
  out.set(VIPS_META_N_PAGES, frames.count());
  return out;
}

VImage flatten_on_white(const VImage &image) {
  if (!image.has_alpha()) return image;
  return image.flatten(VImage::option()->set("background", std::vector<double>{255, 255, 255}));
}

void save_png(const VImage &image, void **data, size_t *size) {
  image.write_to_buffer(".png", data, size, VImage::option()->set("strip", true)->set("compression", 6));
}

void save_jpeg(const VImage &image, int quality, void **data, size_t *size) {
  flatten_on_white(image).write_to_buffer(".jpg", data, size, VImage::option()->set("strip", true)->set("Q", quality));
}

// libheif directly, not libvips' heifsave: see native/encode/avif.cc.
void save_avif(const VImage &image, int quality, void **data, size_t *size) { encode_avif(image, quality, data, size); }

// The largest side each format can store (a frame's, for animations): WebP 16383 (14-bit sizes),
// JPEG 65500 (libjpeg's JPEG_MAX_DIMENSION), GIF 65535 (16-bit sizes), AVIF 65536 (AV1's 16-bit
// frame size). Past it the encoder itself fails, which would be a 500 for what is a property of
// the image (a corrupt GIF's screen can be tens of thousands of rows): refused as too large first.
void check_output_size(Format format, int width, int height) {
  int most = 0;
  const char *name = "";
  switch (format) {
    case Format::Webp: most = 16383, name = "WebP"; break;
    case Format::Jpeg: most = 65500, name = "JPEG"; break;
    case Format::Gif: most = 65535, name = "GIF"; break;
    case Format::Avif: most = 65536, name = "AVIF"; break;
    case Format::Png: return;
  }
  if (width > most || height > most)
    throw image_too_large("the result is " + std::to_string(width) + "x" + std::to_string(height) + " pixels, and " +
                          name + " images are at most " + std::to_string(most) +
                          " pixels on a side: resize it, or choose another format");
}

}  // namespace

Encoded save(const Frames &frames, Format format, int quality, Budget *budget) {
  // Formats that cannot animate get the first frame only.
  Frames used = frames;
  if (!can_animate(format) && used.count() > 1) {
    used.split();
    used.images.resize(1);
  }
  check_output_size(format, used.width(), used.height());
  VImage image = join_frames(used);

  Encoded out{nullptr, 0, used.width(), used.height(), used.count(), format, std::nullopt};
  // No quality given: the format's default (docs/api.md, "Extensions: responsive images").
  if (quality <= 0) quality = int(format == Format::Avif ? kAvifQuality : kQuality.fallback);
  switch (format) {
    case Format::Png:
      if (png_encodable(image)) encode_png(image, &out.data, &out.size);
      else save_png(image, &out.data, &out.size);
      break;
    case Format::Webp:
      if (used.count() == 1) encode_webp(image, quality, budget, &out.data, &out.size);
      else encode_animated_webp(image, quality, budget, &out.data, &out.size);
      break;
    case Format::Jpeg: save_jpeg(image, quality, &out.data, &out.size); break;
    case Format::Gif: encode_gif(image, budget, &out.data, &out.size); break;
    case Format::Avif: save_avif(image, quality, &out.data, &out.size); break;
  }
  return out;
}

}  // namespace matte
