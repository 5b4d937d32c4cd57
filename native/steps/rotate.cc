// rotate: 90, 180 or 270 degrees clockwise, exact (no interpolation).
#include "../errors.h"
#include "steps.h"

#include <utility>

using vips::VImage;

namespace matte {

static VImage rotate(const VImage &in, const Step &step) {
  switch (step.angle) {
    case 90: return in.rot(VIPS_ANGLE_D90);
    case 180: return in.rot(VIPS_ANGLE_D180);
    case 270: return in.rot(VIPS_ANGLE_D270);
  }
  return in;
}

void read_rotate(const PlanFields &fields, Step &step) {
  step.angle = int(fields.number("angle", 0));
  if (step.angle != 90 && step.angle != 180 && step.angle != 270) throw Error("internal", "plan: bad angle");
}

void rotate_shape(Size &size, const Step &step) {
  if (step.angle != 180) std::swap(size.width, size.height);
}

void run_rotate(Frames &frames, const Step &step, const StepContext &) {
  frames.apply([&](const VImage &image) { return rotate(image, step); });
}

}  // namespace matte
