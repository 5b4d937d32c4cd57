#include "edge_colour.h"

#include "dilate_row.h"
#include "refine_bands.h"

#include <algorithm>
#include <cmath>

namespace matte {

namespace {

// The alpha that best explains I as a blend of F and B, and how much it can be trusted (0..1).
struct Blend {
  float alpha, trust;
};
Blend blend(const uint8_t *I, const float *F, const float *B, const EdgeColourParams &p) {
  float dot = 0, len2 = 0;
  for (int c = 0; c < 3; c++) {
    float d = F[c] - B[c];
    dot += (I[c] - B[c]) * d;
    len2 += d * d;
  }
  if (len2 < 1) return {0, 0};
  float a = std::clamp(dot / len2, 0.0f, 1.0f);
  float residual2 = 0;
  for (int c = 0; c < 3; c++) {
    float d = I[c] - (B[c] + a * (F[c] - B[c]));
    residual2 += d * d;
  }
  float fits = std::max(0.0f, 1.0f - std::sqrt(residual2) / std::max(1.0f, p.fit));
  float separated = std::min(1.0f, std::sqrt(len2) / std::max(1.0f, p.separation));
  return {a, fits * separated};
}

}  // namespace

void resolve_edge_colours(std::vector<uint8_t> &alpha, const uint8_t *rgb, int W, int H, const EdgeColourParams &p,
                          Budget *budget) {
  if (p.radius <= 0) return;
  const int r = p.radius, fg = p.sure, bg = 255 - p.sure;
  std::vector<uint8_t> source(alpha);  // samples are read from the matte before this step
  // The pixels within `wide` pixels of a change of side of 128 (not only those at 1..254: the
  // sharpened matte may have put the whole of an image's soft edge on one side), by a separable
  // dilation by a (2 wide - 1)^2 square (wide 1: the crossing pixels themselves). Each pass writes
  // only its own rows (refine_bands.h): first the crossings of a row and their dilation along it,
  // then, once every row has them, the dilation across rows and the re-estimate.
  const int d = p.wide - 1;
  std::vector<uint8_t> rows(alpha.size(), 0);
  for_row_bands(H, [&](int first_row, int end_row) {
    std::vector<uint8_t> cross(W);
    for (int y = first_row; y < end_row; y++) {
      // A pixel crosses when one of its 4 neighbours lies on the other side of 128.
      for (int x = 0; x < W; x++) {
        const size_t i = size_t(y) * W + x;
        const bool in = source[i] >= 128;
        cross[x] = (x + 1 < W && (source[i + 1] >= 128) != in) || (x > 0 && (source[i - 1] >= 128) != in) ||
                   (y + 1 < H && (source[i + W] >= 128) != in) || (y > 0 && (source[i - W] >= 128) != in);
      }
      dilate_row(cross.data(), &rows[size_t(y) * W], W, d);
    }
  }, budget);
  for_row_bands(H, [&](int first_row, int end_row) {
  std::vector<uint8_t> near(W);
  for (int y = first_row; y < end_row; y++) {
    // Vertically, whole rows at a time (memory read in order).
    std::fill(near.begin(), near.end(), 0);
    for (int yy = std::max(0, y - d); yy <= std::min(H - 1, y + d); yy++) {
      const uint8_t *in = &rows[size_t(yy) * W];
      for (int x = 0; x < W; x++) near[x] |= in[x];
    }
    const int y0 = std::max(0, y - r), y1 = std::min(H - 1, y + r);
    for (int x = 0; x < W; x++) {
      const size_t i = size_t(y) * W + x;
      const uint8_t v = source[i];
      if (!near[x]) continue;
      const int x0 = std::max(0, x - r), x1 = std::min(W - 1, x + r);
      const uint8_t *I = rgb + i * 3;
      Blend best{0, 0};
      if (!p.pairs) {
        float F[3] = {0, 0, 0}, B[3] = {0, 0, 0};
        int nf = 0, nb = 0;
        for (int yy = y0; yy <= y1; yy++)
          for (int xx = x0; xx <= x1; xx++) {
            const size_t j = size_t(yy) * W + xx;
            const uint8_t *c = rgb + j * 3;
            if (source[j] >= fg) F[0] += c[0], F[1] += c[1], F[2] += c[2], nf++;
            else if (source[j] <= bg) B[0] += c[0], B[1] += c[1], B[2] += c[2], nb++;
          }
        if (!nf || !nb) continue;
        for (int c = 0; c < 3; c++) F[c] /= nf, B[c] /= nb;
        best = blend(I, F, B, p);
      } else {
        // Every foreground sample against every background sample: the pair whose blend lies
        // closest to I (as the sampling-based matting methods choose).
        float fs[81][3], bs[81][3];
        int nf = 0, nb = 0;
        for (int yy = y0; yy <= y1; yy++)
          for (int xx = x0; xx <= x1; xx++) {
            const size_t j = size_t(yy) * W + xx;
            const uint8_t *c = rgb + j * 3;
            if (source[j] >= fg && nf < 81) fs[nf][0] = c[0], fs[nf][1] = c[1], fs[nf][2] = c[2], nf++;
            else if (source[j] <= bg && nb < 81) bs[nb][0] = c[0], bs[nb][1] = c[1], bs[nb][2] = c[2], nb++;
          }
        if (!nf || !nb) continue;
        // A pair's trust is at most its separation term (fits <= 1), which needs no residual: a
        // pair whose separation cannot beat the best so far is skipped. The choice is the same
        // pair as without the bound (ties keep the first), at a fraction of the cost: this search
        // was most of the refinement's time on a 12 MP photo.
        float best_score = -1;
        const float separation = std::max(1.0f, p.separation);
        for (int f = 0; f < nf; f++)
          for (int b = 0; b < nb; b++) {
            float len2 = 0;
            for (int c = 0; c < 3; c++) {
              const float d = fs[f][c] - bs[b][c];
              len2 += d * d;
            }
            if (len2 < 1) continue;  // trust 0: never better than the initial {0, 0}
            if (std::min(1.0f, std::sqrt(len2) / separation) <= best_score) continue;
            Blend e = blend(I, fs[f], bs[b], p);
            if (e.trust > best_score) best_score = e.trust, best = e;
          }
      }
      const float a = best.trust * best.alpha + (1 - best.trust) * (v * (1.0f / 255));
      alpha[i] = uint8_t(std::lround(std::clamp(a, 0.0f, 1.0f) * 255));
    }
  }
  }, budget);
}

}  // namespace matte
