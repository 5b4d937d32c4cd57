// place: the subject (the box of alpha > 0; the whole image when it has no alpha) scaled to a share
// of the canvas and placed in it, inside a margin; the canvas first padded to an aspect ratio with
// transparent pixels. remove.bg's `scale` and `position`: the subject's box takes `scale` % of the
// canvas's limiting side, and sits at x % of the free space from the left, y % from the top.
#include "../errors.h"
#include "steps.h"
#include "subject_box.h"

#include <algorithm>
#include <cmath>
#include <string>

using vips::VImage;

namespace matte {

namespace {

struct Canvas {
  int64_t width, height;
};

// The canvas padded (never cropped) to the step's aspect ratio.
Canvas padded(int64_t width, int64_t height, const Step &step) {
  if (!step.aspect_width || !step.aspect_height) return {width, height};
  const double ratio = double(step.aspect_width) / step.aspect_height;
  if (double(width) / height < ratio) return {std::max(width, int64_t(std::llround(height * ratio))), height};
  return {width, std::max(height, int64_t(std::llround(width / ratio)))};
}

struct Placement {
  Canvas canvas;
  int offset_x, offset_y;  // where the old canvas lies in the new one
  Box from;                // the subject's box in the old canvas
  Box to;                  // and in the new one
};

Placement placement(const Box &box, int width, int height, const Step &step) {
  Placement p{};
  p.canvas = padded(width, height, step);
  p.offset_x = int((p.canvas.width - width) / 2);
  p.offset_y = int((p.canvas.height - height) / 2);
  p.from = box;
  const int cw = int(p.canvas.width), ch = int(p.canvas.height);
  const int mx = int(std::lround(step.margin_percent ? step.margin / 100 * cw : step.margin));
  const int my = int(std::lround(step.margin_percent ? step.margin / 100 * ch : step.margin));
  const int inner_width = cw - 2 * mx, inner_height = ch - 2 * my;
  if (inner_width < 1 || inner_height < 1)
    throw invalid_operation(step.index, "place",
                            "margin leaves no room on a " + size_text(cw, ch) + " canvas");
  const double fit = std::min(double(inner_width) / box.width, double(inner_height) / box.height);
  // A scale is a share of the room inside the margin; without one the subject keeps its size unless
  // it does not fit inside the margin.
  const double s = step.scale > 0 ? step.scale / 100 * fit : std::min(1.0, fit);
  const int w = std::clamp(int(std::lround(box.width * s)), 1, inner_width);
  const int h = std::clamp(int(std::lround(box.height * s)), 1, inner_height);
  int left, top;
  if (step.position_x >= 0) {
    left = mx + int(std::lround(step.position_x / 100 * (inner_width - w)));
    top = my + int(std::lround(step.position_y / 100 * (inner_height - h)));
  } else {
    // The original place: the box's centre stays, as far as the room inside the margin allows.
    left = std::clamp(p.offset_x + box.left + (box.width - w) / 2, mx, mx + inner_width - w);
    top = std::clamp(p.offset_y + box.top + (box.height - h) / 2, my, my + inner_height - h);
  }
  p.to = {left, top, w, h};
  return p;
}

VImage with_alpha(const VImage &image) {
  if (image.has_alpha()) return image;
  return image.bandjoin_const({255}).copy(VImage::option()->set("interpretation", VIPS_INTERPRETATION_sRGB));
}

VImage place(const VImage &in, const Placement &p) {
  const VImage image = with_alpha(in);
  VImage subject = image.crop(p.from.left, p.from.top, p.from.width, p.from.height);
  if (p.to.width != p.from.width || p.to.height != p.from.height) subject = resize_exact(subject, p.to.width, p.to.height);
  return subject.embed(p.to.left, p.to.top, int(p.canvas.width), int(p.canvas.height),
                       VImage::option()->set("extend", VIPS_EXTEND_BLACK));
}

}  // namespace

void read_place(const PlanFields &fields, Step &step) {
  step.scale = fields.has("scale") ? fields.number("scale", kMinPlaceScale, kMaxPlaceScale, 0) : 0;
  if (fields.has("x") || fields.has("y")) {
    step.position_x = fields.number("x", 0, 100, 0);
    step.position_y = fields.number("y", 0, 100, 0);
  }
  if (fields.has("aspectWidth") || fields.has("aspectHeight")) {
    step.aspect_width = int(fields.number("aspectWidth", 1, kMaxAspectTerm, 1));
    step.aspect_height = int(fields.number("aspectHeight", 1, kMaxAspectTerm, 1));
  }
  step.margin_percent = fields.has("marginPercent");
  step.margin = step.margin_percent ? fields.number("marginPercent", 0, kMaxPlaceMarginPercent, 0)
                                    : fields.number("marginPixels", 0, kMaxPlaceMarginPixels, 0);
}

void place_shape(Size &size, const Step &step) {
  Canvas c = padded(size.width, size.height, step);
  size.width = c.width;
  size.height = c.height;
}

void run_place(Frames &frames, const Step &step, const StepContext &context) {
  const int width = frames.width(), height = frames.height();
  const Canvas canvas = padded(width, height, step);
  if (double(canvas.width) * double(canvas.height) * frames.count() > double(context.plan.limits.max_pixels) ||
      canvas.width > VIPS_MAX_COORD || canvas.height > VIPS_MAX_COORD)
    throw image_too_large("place's aspect ratio would pad the canvas to " + size_text(canvas.width, canvas.height) +
                          ", more than the limit of " + std::to_string(context.plan.limits.max_pixels) + " pixels");
  // One box for every frame, so that the frames stay equal.
  std::optional<Box> box = subject_box(frames);
  if (!box) {
    // Nothing to place: the canvas is only padded.
    if (canvas.width == width && canvas.height == height) return;
    const int dx = int((canvas.width - width) / 2), dy = int((canvas.height - height) / 2);
    return frames.apply([&](const VImage &image) {
      return with_alpha(image).embed(dx, dy, int(canvas.width), int(canvas.height),
                                     VImage::option()->set("extend", VIPS_EXTEND_BLACK));
    });
  }
  const Placement p = placement(*box, width, height, step);
  if (p.canvas.width == width && p.canvas.height == height && p.to.left == p.from.left && p.to.top == p.from.top &&
      p.to.width == p.from.width && p.to.height == p.from.height)
    return;
  frames.apply([&](const VImage &image) { return place(image, p); });
  const double sx = double(p.to.width) / p.from.width, sy = double(p.to.height) / p.from.height;
  frames.move_subject([&](const Box &subject) {
    return shifted(scaled(shifted(subject, -p.from.left, -p.from.top), sx, sy), p.to.left, p.to.top);
  });
}

}  // namespace matte
