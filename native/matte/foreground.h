// The cut-out's colours: where the matte is partial, the subject's own colour instead of the
// input's mix of subject and old background, so the cut-out composites over any new background
// without a fringe of the old one; where it is 0, the subject's colour nearby, so a viewer that
// resizes without premultiplying alpha mixes no dark or foreign colour into the edge (docs/api.md,
// "Capacity and shutdown", cut-out colours). Blur-fusion foreground estimation (Forte and Pitie,
// "Approximate Fast Foreground Colour Estimation", ICIP 2021), applied twice as the paper does: the
// local means of the subject's and the background's colours over a wide window, then over a narrow
// one, and the compositing equation I = aF + (1 - a)B solved for F.
#pragma once

#include <cstdint>

namespace matte {

class Budget;

struct ForegroundParams {
  int wide = 45;   // half-width of the first window, full-resolution pixels (the paper's 90 px box)
  int narrow = 3;  // half-width of the second (its 6 px box)
  // The first window's sums are taken over square cells, as small as keeps their number under
  // this, and interpolated between the cells' centres: the wide mean varies slowly.
  double max_cells = 1 << 16;
};

/**
 * Writes the cut-out into `out` (W x H interleaved RGBA, alpha copied from `alpha`) from `rgb` (W x
 * H interleaved RGB) and its matte `alpha` (W x H): opaque pixels keep their colour, partial ones
 * get the estimated foreground, transparent ones the wide window's mean subject colour (the whole
 * subject's mean beyond its reach). Writing the four bands at once spares the join of colour and
 * alpha that would follow. Runs on the job's threads in bands of rows (refine_bands.h), the same bytes
 * for any thread count; polls `budget` (if any) between bands.
 */
void estimate_foreground(const uint8_t *rgb, const uint8_t *alpha, int W, int H, uint8_t *out,
                         const ForegroundParams &p, Budget *budget = nullptr);

}  // namespace matte
