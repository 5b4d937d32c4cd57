// The subject's box: the bounding box of the pixels with alpha > 0. Trim crops to it, place scales
// and moves it, shadow casts from it, and removeBackground records it (frames.h, Frames::subject).
#pragma once

#include "../frames.h"

#include <optional>

namespace matte {

/** The box of the pixels with alpha > 0; the whole image when it has no alpha; nothing when every pixel is transparent. */
std::optional<Box> subject_box(const vips::VImage &image);

/** The union of the frames' subject boxes (frames stay equal in size), or nothing. */
std::optional<Box> subject_box(const Frames &frames);

/** The smallest box holding both. */
Box united(const Box &a, const Box &b);

}  // namespace matte
