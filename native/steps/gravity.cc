// resize's gravity: the window's place from a compass point, a focal point, the subject's matte or
// libvips' attention (gravity.h).
#include "gravity.h"

#include "../budget.h"
#include "../errors.h"
#include "../matte/model.h"
#include "model_matte.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

using vips::VImage;

namespace matte {

namespace {

// The point a gravity keeps: x and y as fractions (of the free space for a compass point, of the
// image for a focal point).
struct Point {
  double x, y;
  bool focal;
};

Point point_of(const Step &step) {
  switch (step.gravity) {
    case Gravity::North: return {0.5, 0, false};
    case Gravity::NorthEast: return {1, 0, false};
    case Gravity::East: return {1, 0.5, false};
    case Gravity::SouthEast: return {1, 1, false};
    case Gravity::South: return {0.5, 1, false};
    case Gravity::SouthWest: return {0, 1, false};
    case Gravity::West: return {0, 0.5, false};
    case Gravity::NorthWest: return {0, 0, false};
    case Gravity::Focus: return {step.focus_x, step.focus_y, true};
    default: return {0.5, 0.5, false};
  }
}

// On one axis: where a window of `window` pixels starts in `extent` (cover, crop), or, negated,
// where an image of `extent` pixels starts in a box of `window` (pad). A compass point takes that
// fraction of the free space (the centre: the floor of half of it, as the centre crop always
// did); a focal point centres the window on it, moved only as far as needed to stay inside. In a
// pad's box both are fractions of the free space.
int64_t axis_offset(double f, bool focal, int64_t extent, int64_t window) {
  if (extent < window) return -int64_t(std::floor(f * double(window - extent)));
  if (!focal) return int64_t(std::floor(f * double(extent - window)));
  return std::clamp<int64_t>(std::llround(f * double(extent) - double(window) / 2), 0, extent - window);
}

// The first frame: the one subject and attention choose from (every frame is cut the same).
VImage first_frame(const Frames &frames) {
  const VImage &image = frames.images.front();
  return frames.is_strip() ? image.crop(0, 0, frames.width(), frames.height()) : image;
}

// The subject's matte of the frames: their own alpha when some of it is below 255 (the image is a
// cut-out already, e.g. after removeBackground), else the model's matte (one handed in by the
// matte cache, or computed and handed back), at the model's size over the whole image.
VImage subject_matte(Frames &frames, const Step &step, const StepContext &context) {
  if (frames.has_alpha()) {
    materialise(frames, context.budget);  // read twice: here and by the resize
    VImage frame = first_frame(frames);
    VImage alpha = frame.extract_band(frame.bands() - 1);
    if (alpha.min() < 255) return alpha;
  }
  if (!context.model)
    throw model_error("resize's gravity subject needs a model, and none is loaded (gravity attention needs none)");
  const ModelSpec &spec = context.model->spec();
  MatteHandover *handover = step.matte;
  if (handover && handover->given && handover->given_width == spec.input_width &&
      handover->given_height == spec.input_height) {
    handover->used_given = true;
    return VImage::new_from_memory(const_cast<uint8_t *>(handover->given), size_t(spec.input_width) * spec.input_height,
                                   spec.input_width, spec.input_height, 1, VIPS_FORMAT_UCHAR);
  }
  materialise(frames, context.budget);  // read twice: by the model's input and by the resize
  VImage small = model_sized(colour_of(first_frame(frames)), spec);
  context.budget.check();
  std::vector<uint8_t> matte = model_matte(small, *context.model, false, context.budget);
  VipsImage *copied = vips_image_new_from_memory_copy(matte.data(), matte.size(), spec.input_width,
                                                      spec.input_height, 1, VIPS_FORMAT_UCHAR);
  if (!copied) throw vips::VError();
  VImage out(copied);
  if (handover && handover->want) handover->computed = out;
  return out;
}

// attention looks at a copy of about this many pixels on its longer side (libvips' grid is 32x32).
constexpr double kAttentionSide = 160;

// The matte is searched on a grid of at most this many cells on the scaled image's longer side.
constexpr double kGridCells = 256;
// Less matte than this share of the image (at full opacity) is no subject: the centre is kept.
constexpr double kLeastSubject = 0.002;
// Windows keeping this share of the most matte a window keeps keep as much: of those, the one
// centred nearest the subject's centre of mass (a small subject is centred, not pushed to an edge).
constexpr double kAsMuch = 0.995;

// A summed-area table of a width x height 8-bit plane: sum over [x0, x1) x [y0, y1) in O(1).
class AreaSums {
 public:
  AreaSums(const uint8_t *plane, int width, int height) : stride_(size_t(width) + 1), sums_(stride_ * (height + 1)) {
    for (int y = 0; y < height; y++) {
      double row = 0;
      for (int x = 0; x < width; x++) {
        row += plane[size_t(y) * width + x];
        sums_[(y + 1) * stride_ + x + 1] = sums_[y * stride_ + x + 1] + row;
      }
    }
  }
  double sum(int x0, int y0, int x1, int y1) const {
    return sums_[y1 * stride_ + x1] - sums_[y0 * stride_ + x1] - sums_[y1 * stride_ + x0] + sums_[y0 * stride_ + x0];
  }

 private:
  size_t stride_;
  std::vector<double> sums_;
};

// A window's start in pixels from its start on the grid: the grid's free range onto the image's.
int64_t from_grid(int cell, int free_cells, int64_t free_pixels) {
  if (free_cells <= 0) return free_pixels / 2;
  return std::clamp<int64_t>(std::llround(double(cell) / free_cells * double(free_pixels)), 0, free_pixels);
}

// g's window over `matte` (any size, stretched over the scaled image): where it keeps the most;
// false (g unchanged) when the matte holds no subject.
bool subject_window(const VImage &matte, ResizeGeometry &g) {
  const double k = std::max(1.0, double(std::max(g.scaled_width, g.scaled_height)) / kGridCells);
  const int gw = std::max(1, int(std::llround(double(g.scaled_width) / k)));
  const int gh = std::max(1, int(std::llround(double(g.scaled_height) / k)));
  const int ww = std::clamp(int(std::llround(double(g.width) / k)), 1, gw);
  const int wh = std::clamp(int(std::llround(double(g.height) / k)), 1, gh);
  const VImage grid = stretch(matte, gw, gh, VIPS_KERNEL_LINEAR).cast(VIPS_FORMAT_UCHAR).copy_memory();
  const uint8_t *plane = static_cast<const uint8_t *>(grid.data());
  const AreaSums sums(plane, gw, gh);
  const double total = sums.sum(0, 0, gw, gh);
  if (total < kLeastSubject * 255 * gw * gh) return false;
  double cx = 0, cy = 0;
  for (int y = 0; y < gh; y++)
    for (int x = 0; x < gw; x++) {
      cx += (x + 0.5) * plane[size_t(y) * gw + x];
      cy += (y + 0.5) * plane[size_t(y) * gw + x];
    }
  cx /= total;
  cy /= total;
  double most = 0;
  for (int y = 0; y + wh <= gh; y++)
    for (int x = 0; x + ww <= gw; x++) most = std::max(most, sums.sum(x, y, x + ww, y + wh));
  int best_x = 0, best_y = 0;
  double nearest = INFINITY;
  for (int y = 0; y + wh <= gh; y++)
    for (int x = 0; x + ww <= gw; x++) {
      if (sums.sum(x, y, x + ww, y + wh) < kAsMuch * most) continue;
      const double dx = x + ww / 2.0 - cx, dy = y + wh / 2.0 - cy, distance = dx * dx + dy * dy;
      if (distance < nearest) nearest = distance, best_x = x, best_y = y;
    }
  g.left = from_grid(best_x, gw - ww, g.scaled_width - g.width);
  g.top = from_grid(best_y, gh - wh, g.scaled_height - g.height);
  return true;
}

}  // namespace

bool has_window(const ResizeGeometry &g) { return g.width < g.scaled_width || g.height < g.scaled_height; }

void place_window(ResizeGeometry &g, const Step &step) {
  const Point p = point_of(step);
  g.left = axis_offset(p.x, p.focal, g.scaled_width, g.width);
  g.top = axis_offset(p.y, p.focal, g.scaled_height, g.height);
}

void place_on_subject(Frames &frames, ResizeGeometry &g, const Step &step, const StepContext &context) {
  subject_window(subject_matte(frames, step, context), g);
}

void place_on_attention(const Frames &scaled, ResizeGeometry &g) {
  // libvips finds its point of attention on a 32x32 grid of the image (edges, skin tones and
  // saturation, in Lab): the same grid from every step-th pixel of every step-th row of the
  // scaled image (in memory), about kAttentionSide pixels on its longer side.
  const VImage frame = first_frame(scaled);
  const int step = std::max(1, int(std::max(frame.width(), frame.height()) / kAttentionSide));
  const VImage small = step > 1 ? frame.subsample(step, step) : frame;
  // The window in the copy's pixels, and the point found, back in the scaled image's.
  const double sx = double(small.width()) / double(g.scaled_width), sy = double(small.height()) / double(g.scaled_height);
  const int width = std::clamp(int(std::lround(double(g.width) * sx)), 1, small.width());
  const int height = std::clamp(int(std::lround(double(g.height) * sy)), 1, small.height());
  int x = 0, y = 0;
  small.smartcrop(width, height,
                  VImage::option()->set("interesting", VIPS_INTERESTING_ATTENTION)->set("attention_x", &x)->set("attention_y", &y));
  // As libvips places its own crop around the point of attention.
  const int64_t cx = std::llround((x + 0.5) / sx), cy = std::llround((y + 0.5) / sy);
  g.left = std::clamp<int64_t>(cx - g.width / 2, 0, g.scaled_width - g.width);
  g.top = std::clamp<int64_t>(cy - g.height / 2, 0, g.scaled_height - g.height);
}

}  // namespace matte
