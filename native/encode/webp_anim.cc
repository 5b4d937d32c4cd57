#include "webp_anim.h"

#include "../budget.h"
#include "../errors.h"
#include "frame_sink.h"
#include "webp.h"

#include <webp/mux.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using vips::VImage;

namespace matte {

namespace {

// libvips' webpsave shows a frame of 10 ms or less for 100 ms, as browsers do.
const int kShortestDelayMs = 10;
const int kDefaultDelayMs = 100;

struct AnimFree {
  void operator()(WebPAnimEncoder *p) const { WebPAnimEncoderDelete(p); }
  void operator()(WebPMux *p) const { WebPMuxDelete(p); }
};

struct Data {
  WebPData data;
  Data() { WebPDataInit(&data); }
  ~Data() { WebPDataClear(&data); }
};

struct Frame {
  WebPPicture picture;
  Frame() { WebPPictureInit(&picture); }
  ~Frame() { WebPPictureFree(&picture); }
};

// The animation's loop count in its ANIM chunk (WebPAnimEncoder writes 0, forever), re-assembled
// as libvips does. WebPAnimEncoder merges identical consecutive frames, and when one frame is left
// it writes a still image, which has no loop count to set.
void set_loop(Data &file, int loop) {
  std::unique_ptr<WebPMux, AnimFree> mux(WebPMuxCreate(&file.data, 1));
  if (!mux) throw Error("internal", "libwebp could not read the animation back");
  uint32_t features = 0;
  if (WebPMuxGetFeatures(mux.get(), &features) != WEBP_MUX_OK) throw Error("internal", "libwebp could not read the animation back");
  if (!(features & ANIMATION_FLAG)) return;
  WebPMuxAnimParams params;
  if (WebPMuxGetAnimationParams(mux.get(), &params) != WEBP_MUX_OK) throw Error("internal", "libwebp wrote no animation");
  params.loop_count = loop;
  if (WebPMuxSetAnimationParams(mux.get(), &params) != WEBP_MUX_OK) throw Error("internal", "invalid WebP loop count");
  Data assembled;
  if (WebPMuxAssemble(mux.get(), &assembled.data) != WEBP_MUX_OK) throw Error("internal", "libwebp could not assemble the animation");
  std::swap(file.data, assembled.data);
}

}  // namespace

void encode_animated_webp(const VImage &input, int quality, Budget *budget, void **data, size_t *size) {
  VImage image = srgb8(input);
  const int bands = image.bands();
  if (bands != 3 && bands != 4)
    throw Error("internal", "the WebP encoder takes RGB or RGBA, not " + std::to_string(bands) + " bands");
  const int width = image.width();
  const int page_height = vips_image_get_page_height(image.get_image());
  std::vector<int> delays;
  if (image.get_typeof("delay")) delays = image.get_array_int("delay");
  const int loop = image.get_typeof("loop") ? image.get_int("loop") : 0;

  WebPAnimEncoderOptions options;
  if (!WebPAnimEncoderOptionsInit(&options)) throw Error("internal", "libwebp's version differs");
  options.minimize_size = 0;
  options.allow_mixed = 0;
  options.kmin = INT_MAX - 1;  // no key frames
  options.kmax = INT_MAX;
  std::unique_ptr<WebPAnimEncoder, AnimFree> encoder(WebPAnimEncoderNew(width, page_height, &options));
  if (!encoder) throw Error("internal", "libwebp could not start the animation");
  WebPConfig config = webp_config(quality);

  int64_t timestamp = 0;
  sink_frames(image, page_height, [&](uint8_t *pixels, int number) {
    if (budget) budget->check();
    Frame frame;
    WebPPicture &picture = frame.picture;
    picture.width = width;
    picture.height = page_height;
    picture.use_argb = 0;
    picture.progress_hook = webp_keep_going;
    picture.user_data = budget;
    int imported = bands == 4 ? WebPPictureImportRGBA(&picture, pixels, width * 4) : WebPPictureImportRGB(&picture, pixels, width * 3);
    if (!imported) throw Error("internal", "libwebp could not take the frame");
    if (!WebPAnimEncoderAdd(encoder.get(), &picture, int(timestamp), &config)) {
      if (picture.error_code == VP8_ENC_ERROR_USER_ABORT && budget) throw budget->error();
      throw Error("internal", std::string("libwebp failed: ") + WebPAnimEncoderGetError(encoder.get()));
    }
    int delay = size_t(number) < delays.size() ? delays[size_t(number)] : kDefaultDelayMs;
    timestamp += delay <= kShortestDelayMs ? kDefaultDelayMs : delay;
    if (timestamp > INT_MAX)
      throw image_too_large("the animation lasts longer than a WebP encoder can count (" + std::to_string(INT_MAX) + " ms)");
  });

  if (budget) budget->check();
  if (!WebPAnimEncoderAdd(encoder.get(), nullptr, int(timestamp), nullptr))
    throw Error("internal", std::string("libwebp failed: ") + WebPAnimEncoderGetError(encoder.get()));
  Data file;
  if (!WebPAnimEncoderAssemble(encoder.get(), &file.data))
    throw Error("internal", std::string("libwebp failed: ") + WebPAnimEncoderGetError(encoder.get()));
  encoder.reset();
  if (loop) set_loop(file, loop);

  *data = g_malloc(file.data.size);
  std::memcpy(*data, file.data.bytes, file.data.size);
  *size = file.data.size;
}

}  // namespace matte
