// blur: a Gaussian of sigma = radius / 2; alpha is blurred premultiplied (no dark fringes).
#include "alpha.h"
#include "steps.h"

using vips::VImage;

namespace matte {

VImage blur(const VImage &in, const Step &step) {
  if (step.value <= 0) return in;
  double sigma = step.value / 2;
  return premultiplied(in, [&](const VImage &image) {
    return image.gaussblur(sigma, VImage::option()->set("precision", VIPS_PRECISION_APPROXIMATE));
  });
}

}  // namespace matte
