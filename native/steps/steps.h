// One function per operation of the spec's table; each takes one frame and returns the new
// frame, building on libvips' lazy graph (nothing is computed until the encoder pulls pixels),
// except where a step must measure the image first (trim, removeBackground).
#pragma once

#include "../plan.h"

#include <vips/vips8>

#include <functional>

#include <cstdint>
#include <optional>

namespace matte {

class Budget;
class Model;

/**
 * Scale to scaled_width x scaled_height, then take the centre width x height. 64-bit: a thin image
 * scaled to a given width can ask for a side far beyond int (1 x 4194305 to width 1024: 4.3e9);
 * pipeline.cc checks the sizes against the limits before resize() narrows them.
 */
struct ResizeGeometry {
  int64_t scaled_width;
  int64_t scaled_height;
  int64_t width;
  int64_t height;
};

/** The geometry of a resize step applied to an image of the given size (docs/api.md, "Operations (edit)"). */
ResizeGeometry resize_geometry(int width, int height, const Step &step);

vips::VImage resize(const vips::VImage &in, const ResizeGeometry &geometry);
/** The scale part of a resize (scaled_width x scaled_height a frame) on a strip of `pages` frames. */
vips::VImage resize_strip(const vips::VImage &strip, int pages, const ResizeGeometry &geometry);
vips::VImage rotate(const vips::VImage &in, const Step &step);
vips::VImage flip(const vips::VImage &in, const Step &step);
vips::VImage blur(const vips::VImage &in, const Step &step);
vips::VImage brightness(const vips::VImage &in, const Step &step);
vips::VImage contrast(const vips::VImage &in, const Step &step);
vips::VImage saturation(const vips::VImage &in, const Step &step);
vips::VImage background(const vips::VImage &in, const Step &step);
vips::VImage remove_background(const vips::VImage &in, const Model &model, const Step &step, Budget &budget);
/**
 * The same, with the model's input made from `reduced` (the same image decoded smaller, without
 * alpha: matte/model_input.h) while the image itself is still being decoded; `full()` gives it,
 * materialised, once the matte is made.
 */
vips::VImage remove_background(const vips::VImage &reduced, const std::function<vips::VImage()> &full,
                               const Model &model, const Step &step, Budget &budget);

struct Box {
  int left, top, width, height;
};

/** The box inside a uniform border (trim), or nothing when the image is uniform. */
std::optional<Box> find_trim_box(const vips::VImage &in);

/** The bounding box of pixels with alpha > 0, or nothing when there is no alpha band. */
std::optional<Box> find_opaque_box(const vips::VImage &in);

/** `box` grown by `margin` pixels a side, or (percent) by margin % of its width left and right, of its height above and below. */
Box with_margin(const Box &box, double margin, bool percent);

/** The pixels of `in` in `box`; where the box passes the image's edge, transparent pixels. */
vips::VImage box_of(const vips::VImage &in, const Box &box);

/** The alpha band alone (255 where there is none): a one-band greyscale image. */
vips::VImage extract_alpha(const vips::VImage &in);

}  // namespace matte
