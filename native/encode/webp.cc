#include "webp.h"

#include "../budget.h"
#include "../errors.h"
#include "../huge_pages.h"

#include <cstring>
#include <string>

using vips::VImage;

namespace matte {

namespace {

struct Picture {
  WebPPicture picture;
  WebPMemoryWriter writer;
  Picture() {
    WebPPictureInit(&picture);
    WebPMemoryWriterInit(&writer);
  }
  ~Picture() {
    WebPPictureFree(&picture);
    WebPMemoryWriterClear(&writer);
  }
};

}  // namespace

// Called by libwebp between rows of macroblocks (and between its passes): false aborts the encode.
int webp_keep_going(int, const WebPPicture *picture) {
  auto *budget = static_cast<Budget *>(picture->user_data);
  return !budget || budget->stopped() == Budget::Stop::None;
}

WebPConfig webp_config(int quality) {
  WebPConfig config;
  if (!WebPConfigPreset(&config, WEBP_PRESET_DEFAULT, float(quality))) throw Error("internal", "libwebp's version differs");
  config.alpha_quality = 100;
  config.method = 4;
  if (!WebPValidateConfig(&config)) throw Error("internal", "invalid WebP settings");
  return config;
}

void encode_webp(const VImage &image, int quality, Budget *budget, void **data, size_t *size) {
  // In memory first: libwebp takes the whole picture at once.
  VImage pixels = image;
  // WebP has no greyscale: grey (and grey + alpha, such as a mask) is written as RGB, as libvips does.
  if (pixels.bands() <= 2) {
    VImage grey = pixels.extract_band(0);
    VImage rgb = grey.bandjoin(grey).bandjoin(grey);
    pixels = pixels.bands() == 2 ? rgb.bandjoin(pixels.extract_band(1)) : rgb;
  }
  pixels = copy_to_memory(pixels);
  if (budget) budget->check();
  int bands = pixels.bands();
  if (pixels.format() != VIPS_FORMAT_UCHAR || (bands != 3 && bands != 4))
    throw Error("internal", "the WebP encoder takes 8-bit RGB or RGBA, not " + std::to_string(bands) + " bands");

  WebPConfig config = webp_config(quality);

  Picture p;
  p.picture.width = pixels.width();
  p.picture.height = pixels.height();
  p.picture.use_argb = 0;
  p.picture.writer = WebPMemoryWrite;
  p.picture.custom_ptr = &p.writer;
  p.picture.progress_hook = webp_keep_going;
  p.picture.user_data = budget;
  auto *rgb = static_cast<const uint8_t *>(pixels.data());
  int stride = pixels.width() * bands;
  int imported = bands == 4 ? WebPPictureImportRGBA(&p.picture, rgb, stride) : WebPPictureImportRGB(&p.picture, rgb, stride);
  if (!imported) throw Error("internal", "libwebp could not take the picture");
  if (budget) budget->check();
  if (!WebPEncode(&config, &p.picture)) {
    if (p.picture.error_code == VP8_ENC_ERROR_USER_ABORT && budget) throw budget->error();
    throw Error("internal", "libwebp failed with error " + std::to_string(int(p.picture.error_code)));
  }
  *data = g_malloc(p.writer.size);
  std::memcpy(*data, p.writer.mem, p.writer.size);
  *size = p.writer.size;
}

}  // namespace matte
