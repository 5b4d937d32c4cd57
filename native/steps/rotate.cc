// rotate: 90, 180 or 270 degrees clockwise, exact (no interpolation).
#include "../errors.h"
#include "../turn.h"
#include "operations.h"
#include "steps.h"

#include <utility>

using vips::VImage;

namespace matte {

void read_rotate(const PlanFields &fields, Step &step) {
  step.angle = int(fields.number("angle", 0));
  if (step.angle != 90 && step.angle != 180 && step.angle != 270) throw Error("internal", "plan: bad angle");
}

void rotate_shape(Size &size, const Step &step) {
  if (step.angle != 180) std::swap(size.width, size.height);
}

// Where a box of a width x height frame lands, turned clockwise by `angle`.
static Box rotated(const Box &box, int angle, int width, int height) {
  switch (angle) {
    case 90: return {height - box.bottom(), box.left, box.height, box.width};
    case 180: return {width - box.right(), height - box.bottom(), box.width, box.height};
    case 270: return {box.top, width - box.right(), box.height, box.width};
  }
  return box;
}

void run_rotate(Frames &frames, const Step &step, const StepContext &context) {
  const int width = frames.width(), height = frames.height();
  // A turn reads its input's columns: computed once into memory rather than tile by tile.
  materialise(frames, context.budget);
  frames.apply([&](const VImage &image) { return turned(image, {step.angle, false}); });
  frames.move_subject([&](const Box &box) { return rotated(box, step.angle, width, height); });
}

}  // namespace matte
