// blur: a Gaussian of sigma = radius / 2; alpha is blurred premultiplied (no dark fringes).
#include "../errors.h"
#include "alpha.h"
#include "steps.h"

#include <cstdio>
#include <string>

using vips::VImage;

namespace matte {

static VImage blur(const VImage &in, const Step &step) {
  if (step.value <= 0) return in;
  double sigma = step.value / 2;
  // libvips 8.14's integer convolution is faster than its box approximation up to sigma ~10 and
  // much slower above it.
  VipsPrecision precision = sigma <= 10 ? VIPS_PRECISION_INTEGER : VIPS_PRECISION_APPROXIMATE;
  return premultiplied(in, [&](const VImage &image) {
    return image.gaussblur(sigma, VImage::option()->set("precision", precision));
  });
}

static std::string scientific(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", value);
  return text;
}

// The work of the plan's blurs, known before any pixel: the pixels each blur touches (all frames)
// x its radius, summed, since a blur's time grows with both. The bound, two blurs of the largest
// radius over the largest image, admits any single blur within the limits and refuses stacks of
// wide blurs over huge images, which no budget would let finish (docs/api.md, "Cost before pixels").
static const double kMaxBlurWork = 5e10;

void blur_cost(const Size &size, const Step &step, double &work) {
  // Trim may shrink the image before a blur: the estimate assumes it does not (an upper bound).
  work += double(size.width) * double(size.height) * size.frames * step.value;
  if (work > kMaxBlurWork)
    throw invalid_operation(step.index, "blur",
                            "is refused before any pixel is computed: the blurs up to this one would cost " +
                                scientific(work) + " pixels x radius (this one: " + size_text(size.width, size.height) +
                                (size.frames > 1 ? " x " + std::to_string(size.frames) + " frames" : "") + " x " +
                                std::to_string(int(step.value)) + "), more than the limit of " +
                                scientific(kMaxBlurWork) + " (two blurs of radius 250 over 100 megapixels); " +
                                "blur a smaller image, or use one blur with a smaller radius");
}

void read_blur(const PlanFields &fields, Step &step) { step.value = fields.number("radius", 0, kMaxBlurRadius, 0); }

// A wide blur reads every output tile's input with a margin of about its radius on each side, and
// libvips keeps no cache between the two: whatever is lazy before it (an upscale, another blur)
// would be computed again for every overlap, so it reads a materialised image instead (the same
// pixels; docs/api.md, "Cost before pixels").
static const double kWideBlur = 20;

static bool in_memory(const Frames &frames) {
  for (const VImage &image : frames.images) {
    VipsImageType type = image.get_image()->dtype;
    if (type != VIPS_IMAGE_SETBUF && type != VIPS_IMAGE_SETBUF_FOREIGN) return false;
  }
  return true;
}

void run_blur(Frames &frames, const Step &step, const StepContext &context) {
  if (step.value > kWideBlur && !in_memory(frames)) materialise(frames, context.budget);
  frames.apply([&](const VImage &image) { return blur(image, step); });
  frames.lazy_neighbourhood = step.value > 0;
}

}  // namespace matte
