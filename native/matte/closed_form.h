// Closed-form matting (Levin, Lischinski, Weiss, TPAMI 2008) in the band where the refined matte is
// unsure: there alpha minimises a^T L a + c |a - prior|^2, L the matting Laplacian of the image
// (alpha locally an affine function of the colour in every 3x3 window), with the pixels outside
// the band held at the prior (the sure foreground and background are the boundary conditions), so
// the band's alpha follows the image's colours (the wide partial alpha of hair, fur, feathers,
// grass) rather than the blur of the model. The band is an adaptive trimap: the wide unsure regions
// of the prior, plus the textured pixels near its outline. Solved by preconditioned conjugate
// gradients at a bounded working size (at most `cap` pixels); below the image's size the solution
// is carried to full size by the guided filter (fitted at the working size, applied at full size).
// Measured by bench/quality: under one point of edge-band error gained on the tune split, for
// several times the refinement's cost at 12 MP, so refine.cc's defaults leave it off.
#pragma once

#include <cstdint>
#include <vector>

namespace matte {

class Budget;

// The defaults are the best set measured on bench/quality's tune split (bench/README.md); `cap`
// 0 leaves the step off, as refine_params() does: it did not pay for its cost.
struct ClosedFormParams {
  int cap = 0;               // working size, pixels; 0: off
  int iterations = 40;       // conjugate-gradient iterations
  float eps = 1e-5f;         // the Laplacian's ridge (colours 0..1)
  float low = 0.02f, high = 0.98f;  // unsure: prior in (low, high)
  int open = 2;              // only unsure regions that survive an opening by this many pixels
  int wide = 16;             // also textured pixels within this many pixels of the outline; 0: not
  float texture = 0.12f;     // the grey's local standard deviation (0..1) that counts as textured
  int grow = 2;              // the unsure band dilated by this many working pixels
  float unsure = 0.1f;       // the pull of the prior in the band (outside, the prior is kept)
  int up_radius = 2;         // the guided filter carrying the solution to full size
  float up_eps = 1e-4f;
};

/**
 * Re-estimates `alpha` (W x H, 0..255, in place) in its unsure band from `rgb` (W x H interleaved
 * RGB). Deterministic whatever the thread count; polls `budget` (if any) between iterations.
 */
void solve_closed_form(uint8_t *alpha, const uint8_t *rgb, int W, int H, const ClosedFormParams &p,
                       Budget *budget = nullptr);

}  // namespace matte
