// background: composites the image OVER a colour. An opaque colour makes the image opaque; a
// colour with alpha a_bg gives alpha a + a_bg (1 - a); `transparent` and opaque images are no-ops.
#include "steps.h"

#include <algorithm>
#include <vector>

using vips::VImage;

namespace matte {

static VImage background(const VImage &in, const Step &step) {
  const auto &c = step.rgba;
  if (!in.has_alpha() || c[3] <= 0) return in;
  if (c[3] >= 255) return in.flatten(VImage::option()->set("background", std::vector<double>{c[0], c[1], c[2]}));
  VImage colour = in.new_from_image(std::vector<double>{c[0], c[1], c[2], c[3]}).copy(
      VImage::option()->set("interpretation", VIPS_INTERPRETATION_sRGB));
  return colour.composite2(in, VIPS_BLEND_MODE_OVER).cast(VIPS_FORMAT_UCHAR);
}

void read_background(const PlanFields &fields, Step &step) {
  std::vector<double> rgba = fields.numbers("rgba", 4);
  for (size_t i = 0; i < 4; i++) step.rgba[i] = std::clamp(rgba[i], 0.0, 255.0);
}

void run_background(Frames &frames, const Step &step, const StepContext &) {
  frames.apply_pointwise([&](const VImage &image) { return background(image, step); });
}

}  // namespace matte
