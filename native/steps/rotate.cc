// rotate: 90, 180 or 270 degrees clockwise, exact (no interpolation).
#include "steps.h"

using vips::VImage;

namespace matte {

VImage rotate(const VImage &in, const Step &step) {
  switch (step.angle) {
    case 90: return in.rot(VIPS_ANGLE_D90);
    case 180: return in.rot(VIPS_ANGLE_D180);
    case 270: return in.rot(VIPS_ANGLE_D270);
  }
  return in;
}

}  // namespace matte
