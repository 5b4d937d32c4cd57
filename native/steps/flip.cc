// flip: h mirrors left-right, v top-bottom, hv both.
#include "steps.h"

#include <string>

using vips::VImage;

namespace matte {

static VImage flip(const VImage &in, const Step &step) {
  VImage out = in;
  if (step.horizontal) out = out.flip(VIPS_DIRECTION_HORIZONTAL);
  if (step.vertical) out = out.flip(VIPS_DIRECTION_VERTICAL);
  return out;
}

void read_flip(const PlanFields &fields, Step &step) {
  std::string direction = fields.text("direction");
  step.horizontal = direction.find('h') != std::string::npos;
  step.vertical = direction.find('v') != std::string::npos;
}

// A left-right mirror of the strip mirrors each frame; a top-bottom one would swap the frames.
bool flip_on_strip(const Step &step) { return !step.vertical; }

void run_flip(Frames &frames, const Step &step, const StepContext &) {
  frames.move_subject([&](const Box &box) {
    return Box{step.horizontal ? frames.width() - box.right() : box.left,
               step.vertical ? frames.height() - box.bottom() : box.top, box.width, box.height};
  });
  if (frames.is_strip()) return frames.apply_pointwise([&](const VImage &image) { return flip(image, step); });
  frames.apply([&](const VImage &image) { return flip(image, step); });
}

}  // namespace matte
