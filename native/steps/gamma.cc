// gamma: out = 255 (in / 255)^(1 / gamma) on the colour bands, rounded; > 1 brightens. A 256-entry
// table looked up per value, as tone.cc's maps; alpha is left untouched.
#include "alpha.h"
#include "steps.h"

using vips::VImage;

namespace matte {

static VImage gamma(const VImage &in, const Step &step) {
  if (step.value == 1) return in;
  VImage table = VImage::identity()
                     .linear(1.0 / 255, 0)
                     .math2_const(VIPS_OPERATION_MATH2_POW, {1 / step.value})
                     .linear(255, 0.5)
                     .cast(VIPS_FORMAT_UCHAR);
  return map_colour(in, [&](const VImage &colour) {
    return colour.format() == VIPS_FORMAT_UCHAR ? colour.maplut(table) : colour.gamma(VImage::option()->set("exponent", step.value));
  });
}

void read_gamma(const PlanFields &fields, Step &step) { step.value = fields.number("value", kMinGamma, kMaxGamma, 1); }

void run_gamma(Frames &frames, const Step &step, const StepContext &) {
  frames.apply_pointwise([&](const VImage &image) { return gamma(image, step); });
}

}  // namespace matte
