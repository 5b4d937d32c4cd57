// flip: h mirrors left-right, v top-bottom, hv both.
#include "steps.h"

using vips::VImage;

namespace matte {

VImage flip(const VImage &in, const Step &step) {
  VImage out = in;
  if (step.horizontal) out = out.flip(VIPS_DIRECTION_HORIZONTAL);
  if (step.vertical) out = out.flip(VIPS_DIRECTION_VERTICAL);
  return out;
}

}  // namespace matte
