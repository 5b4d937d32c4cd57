// sharpen: libvips' unsharp mask (vips_sharpen) on the colour bands: sigma, and its m1 and m2, the
// amounts for flat and for jagged areas; alpha is left untouched. After a strong reduction.
#include "alpha.h"
#include "steps.h"

using vips::VImage;

namespace matte {

static VImage sharpen(const VImage &in, const Step &step) {
  if (step.sigma <= 0) return in;
  return map_colour(in, [&](const VImage &colour) {
    return colour.sharpen(VImage::option()->set("sigma", step.sigma)->set("m1", step.flat)->set("m2", step.jagged));
  });
}

void read_sharpen(const PlanFields &fields, Step &step) {
  step.sigma = fields.number("sigma", 0, kMaxSharpenSigma, 0);
  step.flat = fields.number("flat", 0, kMaxSharpenAmount, kDefaultSharpenFlat);
  step.jagged = fields.number("jagged", 0, kMaxSharpenAmount, kDefaultSharpenJagged);
}

void run_sharpen(Frames &frames, const Step &step, const StepContext &) {
  frames.apply([&](const VImage &image) { return sharpen(image, step); });
  // A convolution: a step reading regions with overlaps after it would compute it again for each.
  if (step.sigma > 0) frames.lazy_neighbourhood = true;
}

}  // namespace matte
