// extend: pixels added on each side (top, right, bottom, left) in a colour, transparent by default
// (imgproxy's padding): the canvas grows, the image keeps its pixels.
#include "../errors.h"
#include "alpha.h"
#include "steps.h"

#include <algorithm>
#include <string>
#include <vector>

using vips::VImage;

namespace matte {

void read_edges(const PlanFields &fields, Step &step) {
  std::vector<double> sides = fields.numbers("sides", 4);
  for (size_t i = 0; i < 4; i++) {
    if (!(sides[i] >= 0 && sides[i] <= kMaxEdgePixels)) throw Error("internal", "plan: a side's pixels are out of range");
    step.sides[i] = int(sides[i]);
  }
}

void read_extend(const PlanFields &fields, Step &step) {
  read_edges(fields, step);
  std::vector<double> rgba = fields.numbers("rgba", 4);
  for (size_t i = 0; i < 4; i++) step.rgba[i] = std::clamp(rgba[i], 0.0, 255.0);
}

void extend_shape(Size &size, const Step &step) {
  size.width += step.sides[1] + step.sides[3];
  size.height += step.sides[0] + step.sides[2];
}

void run_extend(Frames &frames, const Step &step, const StepContext &context) {
  const auto &[top, right, bottom, left] = step.sides;
  const int64_t width = int64_t(frames.width()) + left + right, height = int64_t(frames.height()) + top + bottom;
  if (double(width) * double(height) * frames.count() > double(context.plan.limits.max_pixels) ||
      width > VIPS_MAX_COORD || height > VIPS_MAX_COORD)
    throw image_too_large("extend would make a " + size_text(width, height) + " image, more than the limit of " +
                          std::to_string(context.plan.limits.max_pixels) + " pixels");
  frames.apply([&](const VImage &image) { return embed_in(image, left, top, int(width), int(height), step.rgba); });
  frames.move_subject([&](const Box &box) { return shifted(box, left, top); });
}

}  // namespace matte
