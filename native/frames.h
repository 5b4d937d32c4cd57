// The image as it travels through the steps: its frames, all of the same size, plus the animation
// timing that the encoder writes back. An animation is held in one of two forms:
//   - a strip: one VImage with every frame stacked top to bottom (as the decoder gives it and the
//     encoder takes it), so a step that is the same per frame and per pixel row runs as ONE
//     libvips pipeline over all frames;
//   - frames: one VImage per frame, for steps whose work must stay inside each frame (rotate,
//     vertical flip, blur, trim, removeBackground).
// A strip is split into frames (lazy crops of it) by the first step that needs them; frames are
// never joined back before the encoder.
#pragma once

#include <vips/vips8>

#include <vector>

namespace matte {

struct Frames {
  std::vector<vips::VImage> images;  // the frames, or the strip alone
  int strip_pages = 0;               // > 0: images holds one strip of that many frames
  std::vector<int> delays;           // milliseconds per frame, empty for a still image
  int loop = 0;                      // 0: forever

  // The size the first step's geometry is computed from. It equals the frame size, except right
  // after shrink-on-load, where it is still the size of the image as stored, so that the result
  // size does not depend on how much the decoder shrank.
  int logical_width = 0;
  int logical_height = 0;

  // Whether a neighbourhood step (blur) is still lazy in the graph. A step that reads its input
  // region by region with overlaps (a downscale, a rotation) would recompute the blur for every
  // region, so it reads the frames materialised (steps/operations.h, reads_regions).
  bool lazy_neighbourhood = false;

  bool is_strip() const { return strip_pages > 0; }
  int width() const { return images.front().width(); }
  int height() const { return is_strip() ? images.front().height() / strip_pages : images.front().height(); }
  int count() const { return is_strip() ? strip_pages : int(images.size()); }
  bool has_alpha() const { return images.front().has_alpha(); }

  /** One image per frame from here on: lazy crops of the strip (no pixel is computed). */
  void split() {
    if (!is_strip()) return;
    vips::VImage strip = images.front();
    int page_height = height();
    images.clear();
    for (int i = 0; i < strip_pages; i++) images.push_back(strip.crop(0, i * page_height, strip.width(), page_height));
    strip_pages = 0;
  }

  /** Computes every frame (or the strip) into memory once, so the steps after read pixels instead of a graph. */
  void materialise() {
    for (auto &image : images) image = image.copy_memory();
    lazy_neighbourhood = false;
  }

  /** Applies a per-frame step to every frame; the caller has split a strip. */
  template <typename Fn>
  void apply(Fn &&fn) {
    split();
    for (auto &image : images) image = fn(image);
    logical_width = width();
    logical_height = height();
  }

  /** Applies a step that gives the same pixels on the strip as frame by frame (a per-pixel map). */
  template <typename Fn>
  void apply_pointwise(Fn &&fn) {
    for (auto &image : images) image = fn(image);
    logical_width = width();
    logical_height = height();
  }
};

}  // namespace matte
