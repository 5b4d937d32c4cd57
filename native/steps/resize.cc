// resize: contain, cover, scale-down and crop, with one or two dimensions (docs/api.md, "Operations
// (edit)"), and the extensions (docs/api.md, "Extensions: responsive images"): the fits pad and
// fill, enlarge, the device-pixel ratio and the gravity (gravity.cc places the window).
#include "../errors.h"
#include "../resample/enlarge.h"
#include "../resample/reduce.h"
#include "../turn.h"
#include "alpha.h"
#include "gravity.h"
#include "steps.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

using vips::VImage;

namespace matte {

// In double, then 64-bit: never narrowed here (see ResizeGeometry). The clamp keeps an absurd
// scale finite; anything near it is far over every limit and refused before use.
static int64_t scaled(int64_t size, double scale) {
  double v = std::min(std::round(double(size) * scale), 1e15);
  return std::max<int64_t>(1, int64_t(v));
}

// The multiple dpr makes of the asked size: the step's; without enlarge, at most what keeps the
// source's own size (so the box keeps its aspect), and never below 1 (the size as asked, whose fit
// then decides). `s` is the fit's scale at a dpr of 1.
static double dpr_of(const Step &step, double s) {
  if (step.dpr == 1 || enlarges(step)) return step.dpr;
  return std::max(1.0, std::min(step.dpr, 1 / s));
}

// The size asked for, dpr applied (0: not given).
static int64_t asked(int side, double dpr) { return side ? std::max<int64_t>(1, std::llround(side * dpr)) : 0; }

// keepBoxAspect's box: a box larger than the image on either side shrunk by one factor until it
// fits inside, each side rounded (at least 1), so its aspect is the asked one (imgproxy's
// fill-down, IPX's s_ without enlarge). Otherwise the box as asked.
static std::pair<int64_t, int64_t> box_within(int width, int height, int64_t box_width, int64_t box_height) {
  if (box_width <= width && box_height <= height) return {box_width, box_height};
  const double k = std::min(double(width) / box_width, double(height) / box_height);
  return {scaled(box_width, k), scaled(box_height, k)};
}

// The scale and size before the window: contain (scale-down, pad: the image inside the box), cover
// (crop: the image around it), fill (each side on its own).
static ResizeGeometry scaled_geometry(int width, int height, const Step &step) {
  const bool enlarge = enlarges(step);
  const bool around = step.fit == Fit::Cover || step.fit == Fit::Crop || step.fit == Fit::Fill;
  double sx = step.width ? double(step.width) / width : 0;
  double sy = step.height ? double(step.height) / height : 0;
  const double d = dpr_of(step, !step.width || !step.height ? std::max(sx, sy) : around ? std::max(sx, sy) : std::min(sx, sy));
  const int64_t step_width = asked(step.width, d), step_height = asked(step.height, d);
  sx *= d;
  sy *= d;

  if (!step.width || !step.height) {
    // One dimension: the other follows the aspect ratio; fit only decides about enlarging.
    double s = step.width ? sx : sy;
    if (!enlarge && s > 1) return {width, height, width, height};
    int64_t w = step.width ? step_width : scaled(width, s);
    int64_t h = step.height ? step_height : scaled(height, s);
    return {w, h, w, h};
  }

  if (step.keep_box_aspect && !enlarge) {
    // The box then lies inside the image: cover and crop keep a window of the image as it is (one
    // side of the box is the image's), fill scales the image to the box.
    const auto [w, h] = box_within(width, height, step_width, step_height);
    if (w != step_width || h != step_height) return step.fit == Fit::Fill ? ResizeGeometry{w, h, w, h} : ResizeGeometry{width, height, w, h};
  }

  switch (step.fit) {
    case Fit::Contain:
    case Fit::ScaleDown:
    case Fit::Pad: {
      double s = std::min(sx, sy);
      int64_t w = width, h = height;
      if (enlarge || s < 1) {
        // The side that decides the scale lands exactly on the requested size.
        w = sx <= sy ? step_width : std::min(step_width, scaled(width, s));
        h = sy <= sx ? step_height : std::min(step_height, scaled(height, s));
      }
      // pad: the box around the image.
      if (step.fit == Fit::Pad) return {w, h, step_width, step_height};
      return {w, h, w, h};
    }
    case Fit::Cover:
    case Fit::Crop: {
      if (enlarge) {
        double s = std::max(sx, sy);
        int64_t w = sx >= sy ? step_width : std::max(step_width, scaled(width, s));
        int64_t h = sy >= sx ? step_height : std::max(step_height, scaled(height, s));
        return {w, h, step_width, step_height};
      }
      double s = std::min(1.0, std::max(sx, sy));
      int64_t w = s == sx ? step_width : scaled(width, s);
      int64_t h = s == sy ? step_height : scaled(height, s);
      return {w, h, std::min(step_width, w), std::min(step_height, h)};
    }
    case Fit::Fill: {
      int64_t w = enlarge ? step_width : std::min<int64_t>(step_width, width);
      int64_t h = enlarge ? step_height : std::min<int64_t>(step_height, height);
      return {w, h, w, h};
    }
  }
  return {width, height, width, height};
}

ResizeGeometry resize_geometry(int width, int height, const Step &step) {
  ResizeGeometry g = scaled_geometry(width, height, step);
  place_window(g, step);
  return g;
}

// libvips 8.14's resize hands its whole reduction to reduceh/reducev, which refuse more than 1e6
// (a 1000001x1 image resized to 1 pixel wide failed): past a reduction of kLargestReduction, a box
// shrink by a whole factor comes first and lanczos3 does the rest.
constexpr double kLargestReduction = 1000;

static int box_factor(int from, int to) {
  double reduction = double(from) / to;
  return reduction > kLargestReduction ? int(std::ceil(reduction / kLargestReduction)) : 1;
}

// vips_resize's downscale with its two passes swapped: the same Lanczos3 reductions, each after
// its box pre-shrink (gap 2), horizontal first. libvips 8.14 reduces vertically first, and that
// pass's box shrink reads its input a line at a time at the whole input width, the slowest part of
// a large downscale; after the horizontal pass it works at the output's width. On the float pixels
// of a premultiplied image the two orders differ by float rounding only (bench/README.md, "The
// matte cache").
static VImage reduce_across_first(const VImage &image, double hscale, double vscale) {
  // As vips_resize: neither axis below one pixel.
  hscale = std::max(hscale, 1.0 / image.width());
  vscale = std::max(vscale, 1.0 / image.height());
  return image
      .reduceh(1.0 / hscale, VImage::option()->set("kernel", VIPS_KERNEL_LANCZOS3)->set("gap", 2.0))
      .reducev(1.0 / vscale, VImage::option()->set("kernel", VIPS_KERNEL_LANCZOS3)->set("gap", 2.0));
}

// Scales to exactly width x height: libvips rounds the output size itself, so a one-pixel
// difference is cropped or extended at the edge.
VImage resize_exact(const VImage &in, int width, int height) {
  if (in.width() == width && in.height() == height) return in;
  VImage out = premultiplied(in, [&](const VImage &image) {
    int box_x = box_factor(image.width(), width), box_y = box_factor(image.height(), height);
    VImage source = box_x > 1 || box_y > 1 ? image.shrink(box_x, box_y) : image;
    const double hscale = double(width) / source.width(), vscale = double(height) / source.height();
    if (in.has_alpha() && hscale < 1 && vscale < 1) return reduce_across_first(source, hscale, vscale);
    if (reducible_rgb8(source)) {
      // As vips_resize: the axes that shrink first, then those that grow.
      VImage out = hscale < 1 || vscale < 1 ? resize_down_lanczos3(source, std::min(hscale, 1.0), std::min(vscale, 1.0)) : source;
      return hscale > 1 || vscale > 1 ? resize_up_bicubic(out, std::max(hscale, 1.0), std::max(vscale, 1.0)) : out;
    }
    return source.resize(hscale, VImage::option()->set("vscale", vscale)->set("kernel", VIPS_KERNEL_LANCZOS3));
  });
  if (out.width() != width || out.height() != height) {
    if (out.width() >= width && out.height() >= height)
      out = out.crop(0, 0, width, height);
    else
      out = out.embed(0, 0, width, height, VImage::option()->set("extend", VIPS_EXTEND_COPY));
  }
  return out;
}

static VImage resize_strip(const VImage &strip, int pages, const ResizeGeometry &g) {
  if (g.scaled_width > INT32_MAX || g.scaled_height * pages > INT32_MAX)
    throw std::logic_error("resize: unchecked geometry");
  // The vertical scale is the frame's (pages x scaled_height over pages x frame height), so output
  // frame i is rows i x scaled_height.. of the result, sampled exactly where the frame alone would
  // be. The one difference from frame by frame: the kernel's taps past a frame's top and bottom
  // edge read the neighbouring frame instead of a copy of the edge row (sharp does the same), so
  // on a hard cut between frames the first and last rows of a frame carry a few percent of its
  // neighbour (docs/architecture.md, "One job, inside the addon").
  // For a downscale only: the caller resizes frame by frame to enlarge (an upscale's first row
  // would be half the frame above). A downscale's strip is at most as tall as the input strip.
  return resize_exact(strip, int(g.scaled_width), int(g.scaled_height) * pages);
}

// The window of the scaled image (cover, crop), or the box around it in the step's colour (pad:
// transparent by default, an alpha band added for it).
static VImage window(const VImage &scaled, const ResizeGeometry &g, const Step &step) {
  const int w = int(g.width), h = int(g.height), left = int(g.left), top = int(g.top);
  if (w == scaled.width() && h == scaled.height()) return scaled;
  if (w <= scaled.width() && h <= scaled.height()) return scaled.crop(left, top, w, h);
  return embed_in(scaled, -left, -top, w, h, step.rgba);
}

static VImage resize(const VImage &in, const ResizeGeometry &g, const Step &step) {
  // Checked by the caller (check_resize): every side fits the limits, so in int.
  if (g.scaled_width > INT32_MAX || g.scaled_height > INT32_MAX) throw std::logic_error("resize: unchecked geometry");
  return window(resize_exact(in, int(g.scaled_width), int(g.scaled_height)), g, step);
}

// Refuses a resize whose result (or the scaled image it is cropped from) is over the limits,
// before any pixel is computed.
static void check_resize(const ResizeGeometry &g, const Step &step, const Frames &frames, const Limits &limits) {
  if (g.width > kMaxResizeSide || g.height > kMaxResizeSide)
    throw invalid_operation(step.index, "resize",
                            "would make a " + size_text(g.width, g.height) + " image, more than " +
                                std::to_string(kMaxResizeSide) + " pixels on a side");
  // In double: the sides are 64-bit and their product may not fit in 64 bits.
  double scaled = double(g.scaled_width) * double(g.scaled_height) * double(frames.count());
  if (scaled > double(limits.max_pixels))
    throw invalid_operation(step.index, "resize",
                            "would need a " + size_text(g.scaled_width, g.scaled_height) +
                                " image, more than the limit of " + std::to_string(limits.max_pixels) + " pixels");
  // With a very high pixel limit, a side could still pass what libvips (and int) can address.
  if (g.scaled_width > VIPS_MAX_COORD || g.scaled_height > VIPS_MAX_COORD)
    throw invalid_operation(step.index, "resize",
                            "would need a " + size_text(g.scaled_width, g.scaled_height) + " image, more than " +
                                std::to_string(VIPS_MAX_COORD) + " pixels on a side");
}

// A resize of a strip: one scale of the whole strip, then (cover, crop, pad) the same window of
// every frame, taken as crops of that one pipeline.
static void scale_frames(Frames &frames, const ResizeGeometry &g, const Step &step) {
  // An upscale goes frame by frame: its interpolation at a frame's first row would mix in much of
  // the frame above, where a downscale's kernel takes a few percent.
  if (frames.is_strip() && g.scaled_height > frames.height()) frames.split();
  if (!frames.is_strip()) return frames.apply([&](const VImage &image) { return resize(image, g, step); });
  frames.apply_pointwise([&](const VImage &strip) { return resize_strip(strip, frames.strip_pages, g); });
  if (frames.width() == g.width && frames.height() == g.height) return;
  frames.apply([&](const VImage &image) { return resize(image, g, step); });  // only the window is left
}

// A first resize of an image that load.cc left as stored: g (upright) turned back onto the stored
// image, scaled and cut there, then the result turned upright. The turn copies the small result
// rather than the decoded image, and the decode streams into the resize as an upright one does.
// There is no subject's box yet to move.
static void resize_then_turn(Frames &frames, const ResizeGeometry &g, const Step &step) {
  const int orientation = *frames.orientation_after_resize;
  frames.orientation_after_resize.reset();
  const Turn turn = turn_of(orientation);
  const int64_t width = turn.swaps() ? g.scaled_height : g.scaled_width, height = turn.swaps() ? g.scaled_width : g.scaled_height;
  const VipsRect box = turned_source({int(g.left), int(g.top), int(g.width), int(g.height)}, int(width), int(height), turn);
  scale_frames(frames, {width, height, box.width, box.height, box.left, box.top}, step);
  frames.apply([&](const VImage &image) { return upright(image, orientation); });
}

void resize_frames(Frames &frames, const ResizeGeometry &g, const Step &step) {
  if (frames.orientation_after_resize) return resize_then_turn(frames, g, step);
  const double sx = double(g.scaled_width) / frames.width(), sy = double(g.scaled_height) / frames.height();
  scale_frames(frames, g, step);
  // Checked (check_resize): the sides fit in int.
  frames.move_subject([&](const Box &box) { return shifted(scaled(box, sx, sy), -int(g.left), -int(g.top)); });
}

// attention: the whole scaled image is made first and kept in memory, libvips' saliency reads it,
// and the window is cut from it. The decode still streams into the resize on the other core; looking
// at the decode before the resize held it whole and read it twice.
static void resize_on_attention(Frames &frames, ResizeGeometry g, const Step &step, const StepContext &context) {
  resize_frames(frames, {g.scaled_width, g.scaled_height, g.scaled_width, g.scaled_height}, step);
  materialise(frames, context.budget);
  place_on_attention(frames, g);
  // The frames are g's scaled size now: the same resize only cuts g's window (and moves the subject's box).
  resize_frames(frames, g, step);
}

static Gravity gravity_named(const std::string &name) {
  static const std::pair<const char *, Gravity> kNames[] = {
      {"north", Gravity::North}, {"northeast", Gravity::NorthEast}, {"east", Gravity::East},
      {"southeast", Gravity::SouthEast}, {"south", Gravity::South}, {"southwest", Gravity::SouthWest},
      {"west", Gravity::West}, {"northwest", Gravity::NorthWest}, {"focus", Gravity::Focus},
      {"subject", Gravity::Subject}, {"attention", Gravity::Attention}};
  for (const auto &[text, gravity] : kNames)
    if (name == text) return gravity;
  throw Error("internal", "plan: unknown gravity " + name);
}

void read_resize(const PlanFields &fields, Step &step) {
  step.width = fields.has("width") ? int(fields.number("width", 1, kMaxResizeSide, 0)) : 0;
  step.height = fields.has("height") ? int(fields.number("height", 1, kMaxResizeSide, 0)) : 0;
  if (!step.width && !step.height) throw Error("internal", "plan: resize needs width or height");
  std::string fit = fields.text("fit");
  if (fit == "contain") step.fit = Fit::Contain;
  else if (fit == "cover") step.fit = Fit::Cover;
  else if (fit == "scale-down") step.fit = Fit::ScaleDown;
  else if (fit == "crop") step.fit = Fit::Crop;
  else if (fit == "pad") step.fit = Fit::Pad;
  else if (fit == "fill") step.fit = Fit::Fill;
  else throw Error("internal", "plan: unknown fit " + fit);
  if (step.fit == Fit::Pad && (!step.width || !step.height)) throw Error("internal", "plan: pad needs width and height");
  if (fields.has("gravity")) step.gravity = gravity_named(fields.text("gravity"));
  if (step.gravity == Gravity::Focus) {
    std::vector<double> focus = fields.numbers("focus", 2);
    if (!(focus[0] >= 0 && focus[0] <= 1 && focus[1] >= 0 && focus[1] <= 1))
      throw Error("internal", "plan: resize's focus is out of range");
    step.focus_x = focus[0];
    step.focus_y = focus[1];
  }
  if (step.fit == Fit::Pad && (step.gravity == Gravity::Subject || step.gravity == Gravity::Attention))
    throw Error("internal", "plan: pad places the image by a compass or focal point");
  step.enlarge_given = fields.has("enlarge");
  step.enlarge = fields.flag("enlarge", false);
  step.keep_box_aspect = fields.flag("keepBoxAspect", false);
  if (step.keep_box_aspect && (!step.width || !step.height || enlarges(step) ||
                               (step.fit != Fit::Cover && step.fit != Fit::Crop && step.fit != Fit::Fill)))
    throw Error("internal", "plan: keepBoxAspect needs cover, crop or fill, both sides and no enlarging");
  step.dpr = fields.number("dpr", kMinDpr, kMaxDpr, 1);
  if (fields.has("rgba")) {
    std::vector<double> rgba = fields.numbers("rgba", 4);
    for (size_t i = 0; i < 4; i++) step.rgba[i] = std::clamp(rgba[i], 0.0, 255.0);
  }
}

void resize_shape(Size &size, const Step &step) {
  ResizeGeometry g = resize_geometry(int(size.width), int(size.height), step);
  size.width = g.width;
  size.height = g.height;
}

// pad's transparent box as the last step of a JPEG: the encoder flattens it onto white, so the box is
// made white at once, without the alpha band that transparency would add to every pixel.
static bool pads_white_for_jpeg(const Frames &frames, const Step &step, const StepContext &context) {
  const Plan &plan = context.plan;
  const VImage &image = frames.images.front();
  return step.fit == Fit::Pad && step.rgba[3] == 0 && !plan.auto_format && plan.format == Format::Jpeg &&
         &step == &plan.steps.back() && image.format() == VIPS_FORMAT_UCHAR && image.bands() == 3 && !image.has_alpha();
}

static void resize_step(Frames &frames, const Step &step, const StepContext &context) {
  ResizeGeometry g = resize_geometry(frames.logical_width, frames.logical_height, step);
  check_resize(g, step, frames, context.plan.limits);
  if (step.gravity == Gravity::Subject && has_window(g)) place_on_subject(frames, g, step, context);
  if (step.gravity == Gravity::Attention && has_window(g)) return resize_on_attention(frames, g, step, context);
  resize_frames(frames, g, step);
}

void run_resize(Frames &frames, const Step &step, const StepContext &context) {
  if (!pads_white_for_jpeg(frames, step, context)) return resize_step(frames, step, context);
  Step white = step;
  white.rgba = {255, 255, 255, 255};
  resize_step(frames, white, context);
}

}  // namespace matte
