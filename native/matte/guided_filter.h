// The colour-guided filter of He, Sun and Tang (ECCV 2010, TPAMI 2013), in its "fast" form (He and
// Sun 2015): the local linear model alpha = a . I + b is fitted where both the matte and the image
// are known (at the model's resolution), and applied where only the image is (at full resolution),
// so the matte's edges follow the full-resolution image's edges. Used by refine.cc.
#pragma once

#include "../huge_pages.h"

#include <cstdint>
#include <vector>

namespace matte {

class Budget;

/** The mean over every (2r+1)^2 window clipped to the image, in place, O(1) a pixel. */
void box_mean(LargeVector<float> &plane, int w, int h, int r, LargeVector<float> &scratch);

/** Per model pixel: the window-averaged coefficients of alpha = a . rgb + b (rgb and alpha in 0..1). */
struct GuidedCoefficients {
  LargeVector<float> a;  // 3 values a pixel
  LargeVector<float> b;
};

/**
 * Fits alpha ~ a . I + b over every (2r+1)^2 window of the model-sized image `rgb` (interleaved
 * RGB, 0..255) and `matte` (0..255), with the ridge term `eps` (on 0..1 colours), and averages the
 * coefficients over the windows covering each pixel, as the guided filter does. The window means
 * of the planes run on the job's threads, one plane a band (refine_bands.h), polling `budget`.
 */
GuidedCoefficients guided_coefficients(const uint8_t *rgb, const std::vector<uint8_t> &matte, int width, int height,
                                       int radius, float eps, Budget *budget = nullptr);

}  // namespace matte
