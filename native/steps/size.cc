// size: a cap on the image's area (remove.bg's output sizes: preview 0.25 MP, medium 1.5, hd 4,
// or any megapixels), aspect kept, never enlarged. As the first step it is the decoder's
// shrink-on-load (load.cc), so a large JPEG asked for a preview is never decoded at full size.
#include "../errors.h"
#include "steps.h"

#include <cmath>

namespace matte {

ResizeGeometry size_geometry(int width, int height, const Step &step) {
  const double area = double(width) * double(height);
  if (step.max_area <= 0 || area <= step.max_area) return {width, height, width, height};
  // floor(w s) x floor(h s) <= w h s^2 = the cap: the largest size that keeps the aspect and fits.
  const double s = std::sqrt(step.max_area / area);
  const int64_t w = std::max<int64_t>(1, int64_t(std::floor(width * s)));
  const int64_t h = std::max<int64_t>(1, int64_t(std::floor(height * s)));
  return {w, h, w, h};
}

void read_size(const PlanFields &fields, Step &step) {
  double megapixels = fields.number("megapixels", 0);
  if (megapixels != 0 && !(megapixels >= kMinMegapixels && megapixels <= kMaxMegapixels))
    throw Error("internal", "plan: size's megapixels is out of range");
  step.max_area = megapixels * 1e6;
}

void size_shape(Size &size, const Step &step) {
  ResizeGeometry g = size_geometry(int(size.width), int(size.height), step);
  size.width = g.width;
  size.height = g.height;
}

void run_size(Frames &frames, const Step &step, const StepContext &) {
  // From the size as stored, like resize: the result does not depend on the decoder's shrink.
  ResizeGeometry g = size_geometry(frames.logical_width, frames.logical_height, step);
  if (g.width == frames.width() && g.height == frames.height()) return;
  resize_frames(frames, g, step);
}

}  // namespace matte
