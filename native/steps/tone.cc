// brightness, contrast and saturation: per-pixel maps of the colour bands in 8-bit sRGB,
// clamped to 0..255; alpha is left untouched.
#include "alpha.h"
#include "steps.h"

using vips::VImage;

namespace matte {

// The float result is rounded to the nearest integer by the cast (see map_colour), after +0.5.
static const double kRound = 0.5;

// out = a * in + b on every colour band value, then the cast. On 8-bit bands (what the loader
// gives) the map is made once as a 256-entry table, by the same libvips linear and cast on the
// values 0..255, and looked up per value: the same bytes, where linear on the image made a float
// copy of every value and the cast a second pass.
static VImage map_linear(const VImage &in, double a, double b) {
  return map_colour(in, [&](const VImage &c) {
    if (c.format() != VIPS_FORMAT_UCHAR) return c.linear(a, b);
    VImage table = VImage::identity().linear(a, b).cast(VIPS_FORMAT_UCHAR);
    return c.maplut(table);
  });
}

static VImage brightness(const VImage &in, const Step &step) {
  if (step.value == 1) return in;
  return map_linear(in, step.value, kRound);
}

static VImage contrast(const VImage &in, const Step &step) {
  if (step.value == 1) return in;
  // out = (in - 128) * c + 128
  return map_linear(in, step.value, 128 - 128 * step.value + kRound);
}

static VImage saturation(const VImage &in, const Step &step) {
  if (step.value == 1) return in;
  // out = luma + s * (in - luma), with the Rec. 709 luma weights of CSS's saturate() filter.
  const double s = step.value;
  const double lr = 0.2126, lg = 0.7152, lb = 0.0722;
  VImage matrix = VImage::new_matrixv(3, 3,                                                   //
                                      lr + s * (1 - lr), lg * (1 - s), lb * (1 - s),          //
                                      lr * (1 - s), lg + s * (1 - lg), lb * (1 - s),          //
                                      lr * (1 - s), lg * (1 - s), lb + s * (1 - lb));
  return map_colour(in, [&](const VImage &c) { return c.recomb(matrix).linear(1, kRound); });
}

void read_tone(const PlanFields &fields, Step &step) { step.value = fields.number("value", 0, kMaxToneFactor, 1); }

void run_brightness(Frames &frames, const Step &step, const StepContext &) {
  frames.apply_pointwise([&](const VImage &image) { return brightness(image, step); });
}

void run_contrast(Frames &frames, const Step &step, const StepContext &) {
  frames.apply_pointwise([&](const VImage &image) { return contrast(image, step); });
}

void run_saturation(Frames &frames, const Step &step, const StepContext &) {
  frames.apply_pointwise([&](const VImage &image) { return saturation(image, step); });
}

}  // namespace matte
