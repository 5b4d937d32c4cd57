#include "model_input.h"

#include "../plan.h"

namespace matte {

std::optional<vips::VImage> reduced_for_model(const uint8_t *data, size_t size, const LoadOptions &options,
                                              int model_width, int model_height) {
  // load() shrinks on load for a first resize step: a cover resize to twice the model's size
  // makes it pick the largest shrink (1/2, 1/4, 1/8 for JPEG) that leaves both sides at least
  // that large. Leaving lanczos3 a factor of 2 or more keeps the model's input within rounding of
  // the full-size stretch; a shrink all the way down (as sharp's fast shrink-on-load takes) moves
  // it further (test/matte/model-input.test.ts holds the matte within rounding).
  Step target;
  target.op = Op::Resize;
  target.width = 2 * model_width;
  target.height = 2 * model_height;
  target.fit = Fit::Cover;
  LoadOptions reduced = options;
  reduced.first_step = &target;
  reduced.all_frames = false;
  reduced.strip = false;
  // Random access: a turn by EXIF orientation reads out of order (the reduced decode is small).
  reduced.sequential = false;
  reduced.decode_later = false;  // the pipeline's own load only
  Frames frames = load(data, size, reduced);
  if (frames.count() != 1 || frames.has_alpha()) return std::nullopt;
  if (frames.width() >= frames.logical_width && frames.height() >= frames.logical_height) return std::nullopt;
  return frames.images.front();
}

}  // namespace matte
