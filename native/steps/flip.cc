// flip: h mirrors left-right, v top-bottom, hv both.
#include "../turn.h"
#include "operations.h"
#include "steps.h"

#include <string>

using vips::VImage;

namespace matte {

// A top-bottom mirror is a turn by 180 mirrored left-right; both mirrors, the turn alone.
static VImage flip(const VImage &in, const Step &step) {
  return turned(in, {step.vertical ? 180 : 0, step.horizontal != step.vertical});
}

void read_flip(const PlanFields &fields, Step &step) {
  std::string direction = fields.text("direction");
  step.horizontal = direction.find('h') != std::string::npos;
  step.vertical = direction.find('v') != std::string::npos;
}

// A left-right mirror of the strip mirrors each frame; a top-bottom one would swap the frames.
bool flip_on_strip(const Step &step) { return !step.vertical; }

void run_flip(Frames &frames, const Step &step, const StepContext &context) {
  frames.move_subject([&](const Box &box) {
    return Box{step.horizontal ? frames.width() - box.right() : box.left,
               step.vertical ? frames.height() - box.bottom() : box.top, box.width, box.height};
  });
  if (frames.is_strip()) return frames.apply_pointwise([&](const VImage &image) { return flip(image, step); });
  // A top-bottom mirror reads its input's last rows first: computed once into memory.
  if (step.vertical) materialise(frames, context.budget);
  frames.apply([&](const VImage &image) { return flip(image, step); });
}

}  // namespace matte
