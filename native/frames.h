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

#include "huge_pages.h"
#include "layer_blend.h"

#include <vips/vips8>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace matte {

/** A rectangle of a frame's pixels. */
struct Box {
  int left, top, width, height;
  int right() const { return left + width; }
  int bottom() const { return top + height; }
};

/** `box` moved by dx, dy. */
inline Box shifted(const Box &box, int dx, int dy) { return {box.left + dx, box.top + dy, box.width, box.height}; }

/** The pixels `box` covers once its frame is scaled by sx, sy (its edges outwards). */
inline Box scaled(const Box &box, double sx, double sy) {
  int left = int(std::floor(box.left * sx + 1e-9)), top = int(std::floor(box.top * sy + 1e-9));
  int right = int(std::ceil(box.right() * sx - 1e-9)), bottom = int(std::ceil(box.bottom() * sy - 1e-9));
  return {left, top, std::max(1, right - left), std::max(1, bottom - top)};
}

/** The part of `box` inside a width x height frame, or nothing. */
inline std::optional<Box> clipped(const Box &box, int width, int height) {
  int left = std::max(0, box.left), top = std::max(0, box.top);
  int right = std::min(width, box.right()), bottom = std::min(height, box.bottom());
  if (right <= left || bottom <= top) return std::nullopt;
  return Box{left, top, right - left, bottom - top};
}

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

  // The subject's box (alpha > 0 where removeBackground left it, the union over the frames), in
  // this frame's pixels: each step that moves pixels after removeBackground moves it too (the
  // library's Result.foreground). None before removeBackground, or when nothing is left of it.
  std::optional<Box> subject;

  // The input's size as loaded, after orientation (a region of interest in the input's pixels).
  int input_width = 0;
  int input_height = 0;

  // A layer under each frame, of its size: a shadow (steps/shadow.cc), kept apart so that a
  // background image blends it in sRGB, as a designer's shadow, and the subject's edge in linear
  // light (steps/background_image.cc). Any other step gets the frames flattened first (flatten).
  std::vector<vips::VImage> under;

  // Set by load() when it left the frames as the decoder's sequential output (LoadOptions::
  // decode_later): the EXIF orientation still to apply once decode_in_memory() has decoded them.
  std::optional<int> undecoded_orientation;

  // Set by load() when the first step, a resize, runs on the image as stored (LoadOptions::
  // first_step): the EXIF orientation whose turn that resize gives its result (steps/resize.cc).
  // The sizes of the frames are then the stored ones; logical_width and logical_height are upright.
  std::optional<int> orientation_after_resize;

  bool is_strip() const { return strip_pages > 0; }
  int width() const { return images.front().width(); }
  int height() const { return is_strip() ? images.front().height() / strip_pages : images.front().height(); }
  int count() const { return is_strip() ? strip_pages : int(images.size()); }
  bool has_alpha() const { return images.front().has_alpha(); }

  /** The layer under each frame composited into it (sRGB, premultiplied: libvips' OVER; in one pass
   * for 8-bit RGBA, layer_blend.h). */
  void flatten() {
    if (under.empty()) return;
    for (size_t i = 0; i < images.size(); i++)
      images[i] = srgb_over_takes(under[i], images[i])
                      ? srgb_over(under[i], images[i])
                      : under[i]
                            .composite2(images[i], VIPS_BLEND_MODE_OVER)
                            .cast(VIPS_FORMAT_UCHAR)
                            .copy(vips::VImage::option()->set("interpretation", VIPS_INTERPRETATION_sRGB));
    under.clear();
  }

  /** Moves the subject's box by `fn` (from the box to the box), then keeps what lies inside the frame. */
  template <typename Fn>
  void move_subject(Fn &&fn) {
    if (subject) subject = clipped(fn(*subject), width(), height());
  }

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
    for (auto &image : images) image = copy_to_memory(image);
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
