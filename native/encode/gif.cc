// GIF encoding, frame by frame, as libvips 8.14's gifsave (foreign/cgifsave.c) does it, so that the
// files are the ones matte wrote through gifsave (test/engine/gif-webp-encoders.test.ts compares
// them):
//
//  1. alpha is thresholded at 128; a pixel below it becomes transparent black;
//  2. libimagequant builds a palette for the frame (at most 255 colours, so that one index is
//     always free for transparency), then quantises a 1x1 image whose fixed colours are that
//     palette, which makes a palette the remapping will not move;
//  3. the first frame's palette is the global one. A later frame uses the global palette if it is
//     the closer of the two and within the inter-palette error, else the previous frame's palette
//     (as a local table) if that is within it, else its own (local table);
//  4. the frame is remapped to the palette with full Floyd-Steinberg dithering;
//  5. from the second frame on, unless a pixel turned transparent where the previous frame's was
//     not (then the transparent index must mean alpha), pixels equal to the previous frame's become
//     the transparent index;
//  6. cgif writes the frame, with its delay, trimmed to the area that changed.
//
// Where the time goes, and how the budget reaches it: libimagequant's histogram, palette search
// and remapping (its progress callbacks: between quantisation stages and K-means iterations, and
// once per row while dithering) and cgif's LZW of each frame (checked before every frame and
// before the last one is flushed).
#include "gif.h"

#include "../budget.h"
#include "../errors.h"
#include "frame_sink.h"

#include <cgif.h>
#include <libimagequant.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using vips::VImage;

namespace matte {

namespace {

// gifsave's defaults in libvips 8.14 (native/save.cc never passed others).
const int kMaxColours = 255;  // bitdepth 8, one index kept for transparency
const int kQuantizerSpeed = 11 - 7;  // effort 7
const float kDither = 1.0f;
const double kInterpaletteMaxError = 3.0;
const int kAlphaThreshold = 128;

struct LiqFree {
  void operator()(liq_attr *p) const { liq_attr_destroy(p); }
  void operator()(liq_image *p) const { liq_image_destroy(p); }
  void operator()(liq_result *p) const { liq_result_destroy(p); }
};
using Attr = std::unique_ptr<liq_attr, LiqFree>;
using LiqImage = std::unique_ptr<liq_image, LiqFree>;
using Result = std::unique_ptr<liq_result, LiqFree>;

// libimagequant's progress callbacks: 0 stops the quantisation or the remapping (LIQ_ABORTED).
int keep_going(float, void *user) {
  auto *budget = static_cast<Budget *>(user);
  return !budget || budget->stopped() == Budget::Stop::None;
}

// How far a palette is from another: the root mean square, over its entries and RGB, of the
// distance to the nearest entry of the other (a transparent entry matches only a transparent one).
double palette_distance(const liq_palette &from, const liq_palette &to) {
  double total = 0;
  for (unsigned i = 0; i < from.count; i++) {
    const liq_color &a = from.entries[i];
    double best = 255 * 255 * 3;
    for (unsigned j = 0; j < to.count && best > 0; j++) {
      const liq_color &b = to.entries[j];
      if (!a.a) {
        if (!b.a) best = 0;
        continue;
      }
      if (!b.a) continue;
      double dr = double(a.r) - b.r, dg = double(a.g) - b.g, db = double(a.b) - b.b;
      best = std::min(best, dr * dr + dg * dg + db * db);
    }
    total += best;
  }
  return std::sqrt(total / (3.0 * from.count));
}

// Gives `index` the transparent index `trans` where `frame` repeats `previous` (same alpha, and RGB
// equal or both transparent), and keeps `previous` as what the viewer shows after this frame.
void mark_unchanged(uint8_t *previous, const uint8_t *frame, uint8_t *index, size_t pixels, uint8_t trans) {
  for (size_t i = 0; i < pixels; i++) {
    uint8_t *o = previous + 4 * i;
    const uint8_t *n = frame + 4 * i;
    if (o[3] == n[3] && (!o[3] || (o[0] == n[0] && o[1] == n[1] && o[2] == n[2]))) index[i] = trans;
    if (index[i] != trans) std::memcpy(o, n, 4);
  }
}

class GifWriter {
 public:
  GifWriter(int width, int height, Budget *budget, std::vector<int> delays, int loop)
      : width_(width), height_(height), pixels_(size_t(width) * size_t(height)), budget_(budget),
        delays_(std::move(delays)), loop_(loop), attr_(liq_attr_create()) {
    if (!attr_) throw Error("internal", "libimagequant could not start");
    liq_set_max_colors(attr_.get(), kMaxColours);
    liq_set_quality(attr_.get(), 0, 100);
    liq_set_speed(attr_.get(), kQuantizerSpeed);
    liq_attr_set_progress_callback(attr_.get(), keep_going, budget_);
    previous_.assign(4 * pixels_, 0);
    index_.assign(pixels_, 0);
  }

  // A stopped encode still closes cgif, which would flush the frames it holds (LZW, then write):
  // the first write fails, and cgif skips the rest.
  ~GifWriter() {
    if (!gif_) return;
    out_.discard = true;
    cgif_close(gif_);
  }

  GifWriter(const GifWriter &) = delete;
  GifWriter &operator=(const GifWriter &) = delete;

  // One whole RGBA frame (thresholded in place).
  void add(uint8_t *rgba, int number) {
    check_budget();
    bool alpha_constraint = false;
    for (size_t i = 0; i < pixels_; i++) {
      uint8_t *p = rgba + 4 * i;
      if (p[3] >= kAlphaThreshold) {
        p[3] = 255;
        continue;
      }
      std::memset(p, 0, 4);
      if (number > 0 && previous_[4 * i + 3]) alpha_constraint = true;
    }

    LiqImage image(liq_image_create_rgba(attr_.get(), rgba, width_, height_, 0));
    if (!image) throw Error("internal", "libimagequant could not take the frame");
    bool local = false;
    liq_result *palette = pick_palette(image.get(), &local);
    const liq_palette &entries = *liq_get_palette(palette);
    const bool transparent = entries.count > 0 && entries.entries[0].a == 0;  // libimagequant sorts it first
    const int colours = int(entries.count);
    uint8_t rgb[256 * 3];
    for (int i = 0; i < colours; i++) {
      rgb[3 * i] = entries.entries[i].r;
      rgb[3 * i + 1] = entries.entries[i].g;
      rgb[3 * i + 2] = entries.entries[i].b;
    }

    liq_set_dithering_level(palette, kDither);
    liq_result_set_progress_callback(palette, keep_going, budget_);
    liq_error remapped = liq_write_remapped_image(palette, image.get(), index_.data(), index_.size());
    if (remapped != LIQ_OK) fail(remapped, "dithering");
    image.reset();

    if (!gif_) start(rgb, colours);
    CGIF_FrameConfig frame{};
    frame.genFlags = CGIF_FRAME_GEN_USE_TRANSPARENCY | CGIF_FRAME_GEN_USE_DIFF_WINDOW;
    if (transparent) {
      frame.attrFlags |= CGIF_FRAME_ATTR_HAS_ALPHA;
      frame.transIndex = 0;
    }
    if (number > 0 && !alpha_constraint) {
      uint8_t trans = transparent ? 0 : uint8_t(colours);
      mark_unchanged(previous_.data(), rgba, index_.data(), pixels_, trans);
      frame.attrFlags = (frame.attrFlags & ~CGIF_FRAME_ATTR_HAS_ALPHA) | CGIF_FRAME_ATTR_HAS_SET_TRANS;
      frame.transIndex = trans;
    } else {
      std::memcpy(previous_.data(), rgba, 4 * pixels_);
    }
    if (size_t(number) < delays_.size())
      frame.delay = uint16_t(std::clamp(std::rint(delays_[size_t(number)] / 10.0), 0.0, 65535.0));
    if (local) {
      frame.attrFlags |= CGIF_FRAME_ATTR_USE_LOCAL_TABLE;
      frame.pLocalPalette = rgb;
      frame.numLocalPaletteEntries = uint16_t(colours);
    }
    frame.pImageData = index_.data();
    check_budget();
    int added = cgif_addframe(gif_, &frame);
    if (added != CGIF_OK) throw Error("internal", "cgif failed with error " + std::to_string(added));
  }

  void finish(void **data, size_t *size) {
    if (!gif_) throw Error("internal", "the GIF has no frame");
    check_budget();  // closing writes the last frame
    CGIF *gif = gif_;
    gif_ = nullptr;
    int closed = cgif_close(gif);
    if (closed != CGIF_OK) throw Error("internal", "cgif failed with error " + std::to_string(closed));
    *data = g_malloc(out_.bytes.size());
    std::memcpy(*data, out_.bytes.data(), out_.bytes.size());
    *size = out_.bytes.size();
  }

 private:
  void check_budget() {
    if (budget_) budget_->check();
  }

  [[noreturn]] void fail(liq_error error, const char *what) {
    if (error == LIQ_ABORTED && budget_) throw budget_->error();
    throw Error("internal", std::string("libimagequant failed (") + what + "): error " + std::to_string(int(error)));
  }

  // The frame's own palette, made fixed: quantised once for its colours, then again as a 1x1 image
  // whose fixed colours are those, so that the remapping keeps them as they are.
  Result fixed_palette(liq_image *image) {
    liq_result *raw = nullptr;
    liq_error error = liq_image_quantize(image, attr_.get(), &raw);
    if (error != LIQ_OK) fail(error, "quantisation");
    Result found(raw);
    const liq_palette &palette = *liq_get_palette(found.get());
    uint8_t pixel[4] = {0, 0, 0, 0};
    LiqImage fixed(liq_image_create_rgba(attr_.get(), pixel, 1, 1, 0));
    if (!fixed) throw Error("internal", "libimagequant could not make the palette image");
    for (unsigned i = 0; i < palette.count; i++) liq_image_add_fixed_color(fixed.get(), palette.entries[i]);
    found.reset();
    error = liq_image_quantize(fixed.get(), attr_.get(), &raw);
    if (error != LIQ_OK) fail(error, "quantisation");
    return Result(raw);
  }

  // The palette for this frame (step 3 in the file's comment); `local`: written as a local table.
  liq_result *pick_palette(liq_image *image, bool *local) {
    Result own = fixed_palette(image);
    if (!global_) {
      global_ = std::move(own);
      previous_palette_ = global_.get();
      *local = false;
      return global_.get();
    }
    const liq_palette &mine = *liq_get_palette(own.get());
    double to_global = palette_distance(mine, *liq_get_palette(global_.get()));
    double to_previous =
        previous_palette_ == global_.get() ? to_global : palette_distance(mine, *liq_get_palette(previous_palette_));
    if (to_global <= to_previous && to_global < kInterpaletteMaxError) {
      local_.reset();
      previous_palette_ = global_.get();
      *local = false;
    } else if (to_previous < kInterpaletteMaxError) {
      *local = true;
    } else {
      local_ = std::move(own);
      previous_palette_ = local_.get();
      *local = true;
    }
    return previous_palette_;
  }

  void start(uint8_t *rgb, int colours) {
    CGIF_Config config{};
    // Even a still image is written as an animation (a NETSCAPE2.0 block), as gifsave does. libvips'
    // "loop" counts plays (0: forever); the GIF counts repeats, and plays once without the block.
    config.attrFlags = CGIF_ATTR_IS_ANIMATED | (loop_ == 1 ? CGIF_ATTR_NO_LOOP : 0);
    config.numLoops = uint16_t(std::clamp(loop_ > 1 ? loop_ - 1 : loop_, 0, 65535));
    config.width = uint16_t(width_);
    config.height = uint16_t(height_);
    config.pGlobalPalette = rgb;
    config.numGlobalPaletteEntries = uint16_t(colours);
    config.pWriteFn = write;
    config.pContext = &out_;
    gif_ = cgif_newgif(&config);
    if (!gif_) throw Error("internal", "cgif could not start the GIF");
  }

  struct Output {
    std::vector<uint8_t> bytes;
    bool discard = false;
  };

  static int write(void *context, const uint8_t *bytes, size_t n) {
    auto *out = static_cast<Output *>(context);
    if (out->discard) return -1;
    try {
      out->bytes.insert(out->bytes.end(), bytes, bytes + n);
      return 0;
    } catch (...) {
      return -1;
    }
  }

  int width_, height_;
  size_t pixels_;
  Budget *budget_;
  std::vector<int> delays_;
  int loop_;
  Attr attr_;
  Result global_;                          // the first frame's palette
  Result local_;                           // the last local palette made
  liq_result *previous_palette_ = nullptr;  // the previous frame's: global_ or local_
  std::vector<uint8_t> previous_;           // RGBA as the viewer shows it after the previous frame
  std::vector<uint8_t> index_;
  CGIF *gif_ = nullptr;
  Output out_;
};

}  // namespace

void encode_gif(const VImage &input, Budget *budget, void **data, size_t *size) {
  VImage image = srgb8(input);
  if (!image.has_alpha()) image = image.bandjoin_const({255});
  if (image.bands() != 4) throw Error("internal", "the GIF encoder takes RGB or RGBA, not " + std::to_string(image.bands()) + " bands");
  const int page_height = vips_image_get_page_height(image.get_image());
  if (size_t(image.width()) * size_t(page_height) > size_t(INT32_MAX / 4) || image.width() > 65535 || page_height > 65535)
    throw image_too_large("a GIF frame is at most 65535 pixels on a side and 536870911 pixels");
  std::vector<int> delays;
  if (image.get_typeof("delay")) delays = image.get_array_int("delay");
  int loop = image.get_typeof("loop") ? image.get_int("loop") : 0;

  GifWriter writer(image.width(), page_height, budget, std::move(delays), loop);
  sink_frames(image, page_height, [&](uint8_t *rgba, int number) { writer.add(rgba, number); });
  writer.finish(data, size);
}

}  // namespace matte
