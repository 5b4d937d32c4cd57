// background: composites the image OVER a colour. An opaque colour makes the image opaque; a
// colour with alpha a_bg gives alpha a + a_bg (1 - a); `transparent` and opaque images are no-ops.
#include "steps.h"

using vips::VImage;

namespace matte {

VImage background(const VImage &in, const Step &step) {
  const auto &c = step.rgba;
  if (!in.has_alpha() || c[3] <= 0) return in;
  if (c[3] >= 255) return in.flatten(VImage::option()->set("background", std::vector<double>{c[0], c[1], c[2]}));
  VImage colour = in.new_from_image(std::vector<double>{c[0], c[1], c[2], c[3]}).copy(
      VImage::option()->set("interpretation", VIPS_INTERPRETATION_sRGB));
  return colour.composite2(in, VIPS_BLEND_MODE_OVER).cast(VIPS_FORMAT_UCHAR);
}

}  // namespace matte
