// resize's gravity (docs/api.md, "Extensions: responsive images"): which window of the scaled image
// cover and crop keep, or where pad places the image in its box. Compass and focal points are
// arithmetic on the geometry; `subject` reads a matte (the image's own alpha, one handed in, or the
// model's) and `attention` libvips' saliency, so they choose from pixels as the step runs.
#pragma once

#include "operations.h"

namespace matte {

/** Sets g.left and g.top for the step's compass or focal point (the centre for subject and attention). */
void place_window(ResizeGeometry &g, const Step &step);

/** Whether the geometry keeps a window smaller than the scaled image (cover, crop): gravity has a choice. */
bool has_window(const ResizeGeometry &g);

/**
 * `subject`: moves g's window to where it keeps the most of the subject's matte of the frames (the
 * first frame's: every frame is cut the same), made from the image before it is scaled. The
 * window stays centred when no subject is found.
 */
void place_on_subject(Frames &frames, ResizeGeometry &g, const Step &step, const StepContext &context);

/** `attention`: g's window from libvips' attention strategy on `scaled`, the frames scaled whole to g's scaled size (the first frame's). */
void place_on_attention(const Frames &scaled, ResizeGeometry &g);

}  // namespace matte
