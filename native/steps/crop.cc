// crop: pixels cut off each side (top, right, bottom, left; Cloudflare's trim). Cutting it all is
// refused, before any pixel where the size is known then.
#include "../errors.h"
#include "steps.h"

#include <string>

using vips::VImage;

namespace matte {

// Refuses a crop that leaves nothing of a width x height image.
static void check_crop(int64_t width, int64_t height, const Step &step) {
  const auto &[top, right, bottom, left] = step.sides;
  if (left + right < width && top + bottom < height) return;
  throw invalid_operation(step.index, "crop",
                          "cuts " + std::to_string(left) + "+" + std::to_string(right) + " x " + std::to_string(top) +
                              "+" + std::to_string(bottom) + " pixels off a " + size_text(width, height) +
                              " image: nothing is left");
}

void crop_cost(const Size &size, const Step &step, double &) {
  if (size.exact) check_crop(size.width, size.height, step);
}

void crop_shape(Size &size, const Step &step) {
  size.width = std::max<int64_t>(1, size.width - step.sides[1] - step.sides[3]);
  size.height = std::max<int64_t>(1, size.height - step.sides[0] - step.sides[2]);
}

void run_crop(Frames &frames, const Step &step, const StepContext &) {
  const auto &[top, right, bottom, left] = step.sides;
  check_crop(frames.width(), frames.height(), step);
  const int width = frames.width() - left - right, height = frames.height() - top - bottom;
  frames.apply([&](const VImage &image) { return image.crop(left, top, width, height); });
  frames.move_subject([&](const Box &box) { return shifted(box, -left, -top); });
}

}  // namespace matte
