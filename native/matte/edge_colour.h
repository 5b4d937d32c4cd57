// The last step of the refinement at full resolution: in the thin transition between the refined
// matte's foreground and background, alpha is solved from the pixel's own colour and the colours
// of the sure foreground and background pixels right next to it (a few full-resolution pixels),
// by the compositing equation I = aF + (1 - a)B. This recovers the partial alpha of anti-aliased
// and soft edges, which no smoothing of the model's matte can. Used by refine.cc.
#pragma once

#include <cstdint>
#include <vector>

namespace matte {

class Budget;

struct EdgeColourParams {
  int radius = 3;            // full-resolution pixels searched for samples; 0: off
  int sure = 250;            // alpha >= sure: a foreground sample; <= 255 - sure: a background one
  float separation = 40.0f;  // |F - B| (RGB units) from which the estimate is fully trusted
  float fit = 12.0f;         // distance of I from the line B..F at which it is not trusted at all
  int pairs = 1;             // 0: F and B are the window's means; 1: the sample pair that best explains I
  int wide = 3;              // pixels within `wide` px of a change of side of 128 are re-estimated
};

/**
 * Re-estimates `alpha` (W x H, 0..255, in place) near its transitions (within `wide` px of a change
 * of side of 128) where both a foreground and a background sample lie within `radius`, from `rgb`
 * (W x H interleaved RGB). Only there: elsewhere a faint value has no sample pair near it, and
 * searching the whole image for one would cost more than the rest of the refinement. Runs on the
 * job's threads in bands of rows, polling `budget` (if any) between them (refine_bands.h).
 */
void resolve_edge_colours(uint8_t *alpha, const uint8_t *rgb, int W, int H, const EdgeColourParams &p,
                          Budget *budget = nullptr);

}  // namespace matte
