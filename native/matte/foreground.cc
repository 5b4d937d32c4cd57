#include "foreground.h"

#include "refine_bands.h"
#include "taps.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

namespace matte {

namespace {

// The wide window's sums are taken over cells of s x s pixels, s chosen so that there are at most
// about a million cells: its mean varies slowly, and full-size planes of its eight sums would be
// ~380 MB at 12 MP. Up to a megapixel s is 1 and the sums are exact.
constexpr double kMaxCells = 1 << 20;
// Per cell: a, aR, aG, aB, b, bR, bG, bB with a = alpha and b = 255 - alpha.
constexpr int kSums = 8;

struct Grid {
  int w = 0, h = 0, s = 1;
  std::vector<float> sums;  // the wide window's kSums around each cell
  const float *at(int cx, int cy) const { return &sums[(size_t(cy) * w + cx) * kSums]; }
};

// Window sums along one line of n values (stride apart): out[i] = the sum of in[i - r .. i + r]
// within the line. Prefix sums in double: the same result whatever the band.
void window_sums(const float *in, float *out, int n, size_t stride, int r, std::vector<double> &prefix) {
  prefix.assign(size_t(n) + 1, 0.0);
  for (int i = 0; i < n; i++) prefix[i + 1] = prefix[i] + in[i * stride];
  for (int i = 0; i < n; i++) out[i * stride] = float(prefix[std::min(n, i + r + 1)] - prefix[std::max(0, i - r)]);
}

Grid wide_sums(const uint8_t *rgb, const uint8_t *alpha, int W, int H, int half, double totals[kSums],
               Budget *budget) {
  Grid g;
  g.s = std::max(1, int(std::ceil(std::sqrt(double(W) * H / kMaxCells))));
  g.w = (W + g.s - 1) / g.s, g.h = (H + g.s - 1) / g.s;
  std::vector<float> cells(size_t(g.w) * g.h * kSums);
  // Integer sums per cell (exact: at most s^2 x 255^2), one row of cells a band.
  for_bands(g.h, 1, [&](int first, int end) {
    std::vector<uint64_t> row(size_t(g.w) * kSums);
    for (int cy = first; cy < end; cy++) {
      std::fill(row.begin(), row.end(), 0);
      for (int y = cy * g.s; y < std::min(H, (cy + 1) * g.s); y++)
        for (int cx = 0; cx < g.w; cx++) {
          uint64_t *c = &row[size_t(cx) * kSums];
          for (int x = cx * g.s; x < std::min(W, (cx + 1) * g.s); x++) {
            const uint32_t a = alpha[size_t(y) * W + x], b = 255 - a;
            const uint8_t *I = rgb + (size_t(y) * W + x) * 3;
            c[0] += a, c[1] += a * I[0], c[2] += a * I[1], c[3] += a * I[2];
            c[4] += b, c[5] += b * I[0], c[6] += b * I[1], c[7] += b * I[2];
          }
        }
      for (size_t k = 0; k < row.size(); k++) cells[size_t(cy) * g.w * kSums + k] = float(row[k]);
    }
  }, budget);
  for (int k = 0; k < kSums; k++) totals[k] = 0;
  for (size_t i = 0; i < cells.size(); i++) totals[i % kSums] += cells[i];
  // The window (2r + 1 cells a side), separable: along rows, then along columns.
  const int r = std::max(1, int(std::lround(double(half) / g.s)));
  std::vector<float> across(cells.size());
  for_bands(g.h, 16, [&](int first, int end) {
    std::vector<double> prefix;
    for (int cy = first; cy < end; cy++)
      for (int k = 0; k < kSums; k++)
        window_sums(&cells[size_t(cy) * g.w * kSums + k], &across[size_t(cy) * g.w * kSums + k], g.w, kSums, r, prefix);
  }, budget);
  g.sums.resize(cells.size());
  for_bands(g.w, 16, [&](int first, int end) {
    std::vector<double> prefix;
    for (int cx = first; cx < end; cx++)
      for (int k = 0; k < kSums; k++)
        window_sums(&across[size_t(cx) * kSums + k], &g.sums[size_t(cx) * kSums + k], g.h, size_t(g.w) * kSums, r,
                    prefix);
  }, budget);
  return g;
}

inline uint8_t to_byte(float v) { return uint8_t(std::lround(std::clamp(v, 0.0f, 255.0f))); }

// F = mean F + a (I - a mean F - (1 - a) mean B): the compositing equation's residual given to F.
inline float fused(float mean_f, float mean_b, float a, float I) {
  return mean_f + a * (I - a * mean_f - (1 - a) * mean_b);
}

}  // namespace

void estimate_foreground(const uint8_t *rgb, const uint8_t *alpha, int W, int H, uint8_t *out,
                         const ForegroundParams &p, Budget *budget) {
  double totals[kSums];
  const Grid g = wide_sums(rgb, alpha, W, H, p.wide, totals, budget);
  if (totals[0] == 0 || totals[4] == 0) {
    // No subject, or no background: nothing to estimate.
    std::memcpy(out, rgb, size_t(W) * H * 3);
    return;
  }
  float whole_f[3], whole_b[3];
  for (int c = 0; c < 3; c++) whole_f[c] = float(totals[1 + c] / totals[0]), whole_b[c] = float(totals[5 + c] / totals[4]);

  // A transparent pixel's colour: its cell's mean subject colour.
  std::vector<uint8_t> cell_colour(size_t(g.w) * g.h * 3);
  for (size_t i = 0; i < size_t(g.w) * g.h; i++) {
    const float *S = &g.sums[i * kSums];
    for (int c = 0; c < 3; c++) cell_colour[i * 3 + c] = to_byte(S[0] > 0 ? S[1 + c] / S[0] : whole_f[c]);
  }

  const Taps tx = taps(W, g.w), ty = taps(H, g.h);
  // The first estimate at a pixel: F1 and the wide window's mean background B1.
  auto first_pass = [&](int x, int y, float *F1, float *B1) {
    const float fx = tx.f[x], fy = ty.f[y];
    const float w[4] = {(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy};
    const float *cell[4] = {g.at(tx.i0[x], ty.i0[y]), g.at(tx.i1[x], ty.i0[y]), g.at(tx.i0[x], ty.i1[y]),
                            g.at(tx.i1[x], ty.i1[y])};
    float S[kSums];
    for (int k = 0; k < kSums; k++) S[k] = w[0] * cell[0][k] + w[1] * cell[1][k] + w[2] * cell[2][k] + w[3] * cell[3][k];
    const size_t i = size_t(y) * W + x;
    const float a = alpha[i] * (1.0f / 255);
    for (int c = 0; c < 3; c++) {
      const float mean_f = S[0] > 0 ? S[1 + c] / S[0] : whole_f[c];
      B1[c] = S[4] > 0 ? S[5 + c] / S[4] : whole_b[c];
      F1[c] = alpha[i] == 255 ? rgb[i * 3 + c] : std::clamp(fused(mean_f, B1[c], a, rgb[i * 3 + c]), 0.0f, 255.0f);
    }
  };

  // Each column's cell, once: a division per pixel cost more than the rest of the write.
  std::vector<int> cell_x(W);
  for (int x = 0; x < W; x++) cell_x[x] = std::min(g.w - 1, x / g.s);
  const int n = p.narrow;
  for_row_bands(H, [&](int y0, int y1) {
    // Columns within n of a partial pixel of the band: only there is the first estimate needed.
    std::vector<uint8_t> need(W, 0);
    bool any = false;
    for (int y = y0; y < y1; y++)
      for (int x = 0; x < W; x++) {
        const uint8_t v = alpha[size_t(y) * W + x];
        if (v == 0 || v == 255) continue;
        any = true;
        std::fill(need.begin() + std::max(0, x - n), need.begin() + std::min(W, x + n + 1), 1);
      }
    const int r0 = std::max(0, y0 - n), r1 = std::min(H, y1 + n);
    std::unique_ptr<float[]> first;  // F1 and B1 of rows r0..r1, where needed
    if (any) {
      first.reset(new float[size_t(r1 - r0) * W * 6]);
      for (int y = r0; y < r1; y++)
        for (int x = 0; x < W; x++)
          if (need[x]) {
            float *f = &first[(size_t(y - r0) * W + x) * 6];
            first_pass(x, y, f, f + 3);
          }
    }
    for (int y = y0; y < y1; y++) {
      const uint8_t *cells = &cell_colour[size_t(std::min(g.h - 1, y / g.s)) * g.w * 3];
      for (int x = 0; x < W; x++) {
        const size_t i = size_t(y) * W + x;
        const uint8_t v = alpha[i];
        if (v == 255) {
          std::memcpy(&out[i * 3], &rgb[i * 3], 3);
        } else if (v == 0) {
          std::memcpy(&out[i * 3], &cells[size_t(cell_x[x]) * 3], 3);
        } else {
          // The second estimate: the narrow window's means of F1 (weighted by a) and B1 (by 1 - a).
          double sa = 0, sb = 0, sf[3] = {0, 0, 0}, sbg[3] = {0, 0, 0};
          for (int qy = std::max(0, y - n); qy < std::min(H, y + n + 1); qy++)
            for (int qx = std::max(0, x - n); qx < std::min(W, x + n + 1); qx++) {
              const float wa = alpha[size_t(qy) * W + qx], wb = 255 - wa;
              const float *f = &first[(size_t(qy - r0) * W + qx) * 6];
              sa += wa, sb += wb;
              for (int c = 0; c < 3; c++) sf[c] += wa * f[c], sbg[c] += wb * f[3 + c];
            }
          const float a = v * (1.0f / 255);
          for (int c = 0; c < 3; c++)
            out[i * 3 + c] = to_byte(fused(float(sf[c] / sa), float(sbg[c] / sb), a, rgb[i * 3 + c]));
        }
      }
    }
  }, budget);
}

}  // namespace matte
