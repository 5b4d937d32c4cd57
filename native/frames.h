// The image as it travels through the steps: one VImage per frame (a still image has one),
// all of the same size, plus the animation timing that the encoder writes back.
#pragma once

#include <vips/vips8>

#include <vector>

namespace matte {

struct Frames {
  std::vector<vips::VImage> images;
  std::vector<int> delays;  // milliseconds per frame, empty for a still image
  int loop = 0;             // 0: forever

  // The size the first step's geometry is computed from. It equals the frame size, except right
  // after shrink-on-load, where it is still the size of the image as stored, so that the result
  // size does not depend on how much the decoder shrank.
  int logical_width = 0;
  int logical_height = 0;

  // Whether a neighbourhood step (blur) is still lazy in the graph. A step that reads its input
  // region by region with overlaps (a downscale, a rotation) would recompute the blur for every
  // region: blur 60 then a resize to 300 px of a 4000x3000 image took 30 s that way.
  bool lazy_neighbourhood = false;

  int width() const { return images.front().width(); }
  int height() const { return images.front().height(); }
  int count() const { return int(images.size()); }
  bool has_alpha() const { return images.front().has_alpha(); }

  /** Computes every frame into memory once, so the steps after read pixels instead of a graph. */
  void materialise() {
    for (auto &image : images) image = image.copy_memory();
    lazy_neighbourhood = false;
  }

  /** Applies a per-frame step to every frame. */
  template <typename Fn>
  void apply(Fn &&fn) {
    for (auto &image : images) image = fn(image);
    logical_width = width();
    logical_height = height();
  }
};

}  // namespace matte
