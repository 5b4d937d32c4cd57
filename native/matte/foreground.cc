#include "foreground.h"

#include "../huge_pages.h"
#include "floats4.h"
#include "refine_bands.h"
#include "taps.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

namespace matte {

namespace {

// Per cell: a, aR, aG, aB, b, bR, bG, bB with a = alpha and b = 255 - alpha.
constexpr int kSums = 8;
// Rows a band of the per-pixel pass: each band also reads `narrow` rows above and below it, which
// larger bands share among more rows of their own.
constexpr int kForegroundBandRows = 64;

struct Grid {
  int w = 0, h = 0, s = 1;
  LargeVector<float> sums;  // the wide window's kSums around each cell
  const float *at(int cx, int cy) const { return &sums[(size_t(cy) * w + cx) * kSums]; }
};

// The length of the run of `v` starting at p[0] (== v), at most n, eight bytes at a time.
inline int run_of(const uint8_t *p, int n, uint8_t v) {
  const uint64_t word = v ? ~uint64_t(0) : 0;
  int i = 1;
  while (i + 8 <= n) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w != word) break;
    i += 8;
  }
  while (i < n && p[i] == v) i++;
  return i;
}

// The length of the run of zeros at the start of p (at most n).
inline int run_of_zeros(const uint8_t *p, int n) { return n > 0 && p[0] == 0 ? run_of(p, n, 0) : 0; }

typedef uint8_t Bytes16 __attribute__((vector_size(16)));
typedef double Doubles2 __attribute__((vector_size(16)));
typedef uint16_t Shorts8 __attribute__((vector_size(16)));

// The eight bytes of b from byte k (0 or 8) as 16-bit lanes: interleaved with zeros, in the lane
// order of a little-endian machine (x86-64, arm64).
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "foreground.cc widens bytes in little-endian lane order"
#endif
template <int k>
inline Shorts8 widen_half(Bytes16 b) {
  const Bytes16 zero = {};
#if defined(__clang__)
  return Shorts8(__builtin_shufflevector(b, zero, k, k + 16, k + 1, k + 17, k + 2, k + 18, k + 3, k + 19, k + 4, k + 20,
                                         k + 5, k + 21, k + 6, k + 22, k + 7, k + 23));
#else
  return Shorts8(__builtin_shuffle(b, zero, Bytes16{k, k + 16, k + 1, k + 17, k + 2, k + 18, k + 3, k + 19, k + 4, k + 20,
                                                    k + 5, k + 21, k + 6, k + 22, k + 7, k + 23}));
#endif
}

// sum[j] += bytes[j] for j < n, sixteen at a time (GCC's vector extensions, as floats4.h).
inline void add_bytes(uint16_t *sum, const uint8_t *bytes, int n) {
  int j = 0;
  for (; j + 16 <= n; j += 16) {
    Bytes16 b;
    Shorts8 s0, s1;
    std::memcpy(&b, bytes + j, 16);
    std::memcpy(&s0, sum + j, 16);
    std::memcpy(&s1, sum + j + 8, 16);
    s0 += widen_half<0>(b), s1 += widen_half<8>(b);
    std::memcpy(sum + j, &s0, 16);
    std::memcpy(sum + j + 8, &s1, 16);
  }
  for (; j < n; j++) sum[j] += bytes[j];
}

// The sums of one row of cells (integers, exact), in strips of columns small enough to stay in
// the cache: per column of pixels first, down the cell's rows (the colours of every pixel, alpha,
// the colours of opaque pixels, alpha x colour of partial ones; at most kRows rows at a time,
// so that 16 bits hold them), then across each cell's columns. b = 255 - a gives the
// background's sums.
class CellRowSums {
 public:
  explicit CellRowSums(int s) : cells_(std::max(1, kStripPixels / s)), s_(s) {
    const size_t px = size_t(cells_) * s;
    colour_.resize(px * 3), opaque_.resize(px * 3), partial_.resize(px * 3), alpha_.resize(px);
  }

  // Writes the kSums sums of cells [0, gw) of row cy into row.
  void operator()(const uint8_t *rgb, const uint8_t *alpha, int W, int H, int gw, int cy, uint64_t *row) {
    std::fill_n(row, size_t(gw) * kSums, 0);
    const int y0 = cy * s_, y1 = std::min(H, y0 + s_);
    for (int cx0 = 0; cx0 < gw; cx0 += cells_) {
      const int cx1 = std::min(gw, cx0 + cells_), x0 = cx0 * s_, n = std::min(W, cx1 * s_) - x0;
      for (int r0 = y0; r0 < y1; r0 += kRows) {
        const int r1 = std::min(y1, r0 + kRows);
        // Most strips of a frame hold no subject: their colours' sums alone.
        bool subject = false;
        for (int y = r0; y < r1 && !subject; y++) subject = run_of_zeros(alpha + size_t(y) * W + x0, n) < n;
        std::fill_n(colour_.begin(), n * 3, 0);
        if (subject) {
          std::fill_n(opaque_.begin(), n * 3, 0);
          std::fill_n(partial_.begin(), n * 3, 0);
          std::fill_n(alpha_.begin(), n, 0);
        }
        for (int y = r0; y < r1; y++) {
          const uint8_t *A = alpha + size_t(y) * W + x0, *I = rgb + (size_t(y) * W + x0) * 3;
          add_bytes(colour_.data(), I, n * 3);
          if (!subject) continue;
          add_bytes(alpha_.data(), A, n);
          for (int x = 0; x < n;) {
            const uint8_t v = A[x];
            if (v == 0) {
              x += run_of(A + x, n - x, 0);
            } else if (v == 255) {
              const int len = run_of(A + x, n - x, 255);
              add_bytes(&opaque_[size_t(x) * 3], I + size_t(x) * 3, len * 3);
              x += len;
            } else {
              for (int c = 0; c < 3; c++) partial_[size_t(x) * 3 + c] += uint32_t(v) * I[size_t(x) * 3 + c];
              x++;
            }
          }
        }
        const uint64_t rows = r1 - r0;
        for (int cx = cx0; cx < cx1; cx++) {
          const int a0 = (cx - cx0) * s_, a1 = std::min(n, a0 + s_);
          uint64_t colour[3] = {}, a = 0, opaque[3] = {}, partial[3] = {};
          for (int j = a0 * 3; j < a1 * 3; j += 3)
            colour[0] += colour_[j], colour[1] += colour_[j + 1], colour[2] += colour_[j + 2];
          if (subject) {
            for (int x = a0; x < a1; x++) a += alpha_[x];
            for (int j = a0 * 3; j < a1 * 3; j += 3) {
              opaque[0] += opaque_[j], opaque[1] += opaque_[j + 1], opaque[2] += opaque_[j + 2];
              partial[0] += partial_[j], partial[1] += partial_[j + 1], partial[2] += partial_[j + 2];
            }
          }
          uint64_t *out = &row[size_t(cx) * kSums];
          out[0] += a, out[4] += 255 * rows * (a1 - a0) - a;
          for (int c = 0; c < 3; c++) {
            const uint64_t ai = 255 * opaque[c] + partial[c];
            out[1 + c] += ai, out[5 + c] += 255 * colour[c] - ai;
          }
        }
      }
    }
  }

 private:
  static constexpr int kStripPixels = 256;
  static constexpr int kRows = 257;  // 257 x 255 = 65535
  const int cells_, s_;               // cells a strip, pixels a cell
  std::vector<uint16_t> colour_, opaque_, alpha_;
  std::vector<uint32_t> partial_;
};

// The wide window's sums over cells of s x s pixels (ForegroundParams::max_cells): full-size planes
// of its eight sums would cost many times the image's own memory.
Grid wide_sums(const uint8_t *rgb, const uint8_t *alpha, int W, int H, const ForegroundParams &p, double totals[kSums],
               Budget *budget) {
  Grid g;
  g.s = std::max(1, int(std::ceil(std::sqrt(double(W) * H / std::max(1.0, p.max_cells)))));
  g.w = (W + g.s - 1) / g.s, g.h = (H + g.s - 1) / g.s;
  const size_t stride = size_t(g.w) * kSums;  // one row of cells
  const int r = std::max(1, int(std::lround(double(p.wide) / g.s)));
  g.sums.resize(stride * g.h);
  std::vector<uint64_t> row_totals(size_t(g.h) * kSums);
  // The cells' sums, then the window's along each row of cells (2r + 1 cells, clipped to the
  // grid), one float each. Integers throughout, exact: the same values in any order of summing.
  for_bands(g.h, 4, [&](int first, int end) {
    CellRowSums cell_row_sums(g.s);
    std::vector<uint64_t> row(stride);
    for (int cy = first; cy < end; cy++) {
      cell_row_sums(rgb, alpha, W, H, g.w, cy, row.data());
      uint64_t *total = &row_totals[size_t(cy) * kSums];
      for (int cx = 0; cx < g.w; cx++)
        for (int k = 0; k < kSums; k++) total[k] += row[size_t(cx) * kSums + k];
      int64_t run[kSums] = {};  // signed: a direct conversion to float
      for (int cx = 0; cx < std::min(g.w, r); cx++)
        for (int k = 0; k < kSums; k++) run[k] += row[size_t(cx) * kSums + k];
      float *out = &g.sums[cy * stride];
      for (int cx = 0; cx < g.w; cx++) {
        if (cx + r < g.w)
          for (int k = 0; k < kSums; k++) run[k] += row[size_t(cx + r) * kSums + k];
        if (cx - r - 1 >= 0)
          for (int k = 0; k < kSums; k++) run[k] -= row[size_t(cx - r - 1) * kSums + k];
        for (int k = 0; k < kSums; k++) out[size_t(cx) * kSums + k] = float(run[k]);
      }
    }
  }, budget);
  for (int k = 0; k < kSums; k++) totals[k] = 0;
  for (size_t i = 0; i < row_totals.size(); i++) totals[i % kSums] += double(row_totals[i]);
  // Then along the columns, in place: running sums of whole rows of cells (exact again), in strips
  // of the row so that the threads share it; the last r + 1 rows' values from the pass above are
  // kept aside for the running sums to take off.
  constexpr int kStrip = 512;
  for_bands(int(stride), kStrip, [&](int j0, int j1) {
    const int n = j1 - j0;
    std::vector<double> run(n, 0.0);
    std::vector<float> kept(size_t(r + 1) * n);
    for (int cy = 0; cy < std::min(g.h, r); cy++)
      for (int j = 0; j < n; j++) run[j] += g.sums[cy * stride + j0 + j];
    for (int cy = 0; cy < g.h; cy++) {
      float *row = &g.sums[cy * stride + j0];
      float *slot = &kept[size_t(cy % (r + 1)) * n];  // row cy - r - 1, then row cy
      const float *add = cy + r < g.h ? &g.sums[(cy + r) * stride + j0] : nullptr;
      const bool sub = cy - r - 1 >= 0;
      if (add && sub)
        for (int j = 0; j < n; j++) run[j] += double(add[j]) - double(slot[j]);
      else if (add)
        for (int j = 0; j < n; j++) run[j] += add[j];
      else if (sub)
        for (int j = 0; j < n; j++) run[j] -= slot[j];
      std::memcpy(slot, row, sizeof(float) * n);
      for (int j = 0; j < n; j++) row[j] = float(run[j]);
    }
  }, budget);
  return g;
}

// std::lround of v clamped to [0, 255].
inline uint8_t to_byte(float v) { return round_byte(std::clamp(v, 0.0f, 255.0f)); }

// F = mean F + a (I - a mean F - (1 - a) mean B): the compositing equation's residual given to F.
inline float fused(float mean_f, float mean_b, float a, float I) {
  return mean_f + a * (I - a * mean_f - (1 - a) * mean_b);
}

// An opaque run of n pixels: the input's colours with alpha 255.
void opaque_run(const uint8_t *rgb, uint8_t *out, int n) {
  int i = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  // Four bytes read where three are the pixel's (the fourth, the next pixel's, is replaced): not
  // for the run's last pixel, which may be the image's.
  for (; i + 1 < n; i++) {
    uint32_t v;
    std::memcpy(&v, rgb + i * 3, 4);
    v |= 0xff000000u;
    std::memcpy(out + i * 4, &v, 4);
  }
#endif
  for (; i < n; i++) {
    out[i * 4] = rgb[i * 3], out[i * 4 + 1] = rgb[i * 3 + 1], out[i * 4 + 2] = rgb[i * 3 + 2];
    out[i * 4 + 3] = 255;
  }
}

}  // namespace

void estimate_foreground(const uint8_t *rgb, const uint8_t *alpha, int W, int H, uint8_t *out,
                         const ForegroundParams &p, Budget *budget) {
  double totals[kSums];
  const Grid g = wide_sums(rgb, alpha, W, H, p, totals, budget);
  if (totals[0] == 0 || totals[4] == 0) {
    // No subject, or no background: nothing to estimate.
    for_row_bands(H, [&](int y0, int y1) {
      for (int y = y0; y < y1; y++)
        for (int x = 0; x < W; x++) {
          const size_t i = size_t(y) * W + x;
          std::memcpy(&out[i * 4], &rgb[i * 3], 3);
          out[i * 4 + 3] = alpha[i];
        }
    }, budget);
    return;
  }
  float whole_f[3], whole_b[3];
  for (int c = 0; c < 3; c++) whole_f[c] = float(totals[1 + c] / totals[0]), whole_b[c] = float(totals[5 + c] / totals[4]);

  const Taps tx = taps(W, g.w), ty = taps(H, g.h);
  // The wide window's sums at a pixel, interpolated from the cells around (k in [k0, k0 + 4)).
  auto sums_at = [&](int x, int y, int k0, Floats4 &S) {
    const float fx = tx.f[x], fy = ty.f[y];
    const float w[4] = {(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy};
    const float *cell[4] = {g.at(tx.i0[x], ty.i0[y]), g.at(tx.i1[x], ty.i0[y]), g.at(tx.i0[x], ty.i1[y]),
                            g.at(tx.i1[x], ty.i1[y])};
    S = splat4(w[0]) * load4(cell[0] + k0) + splat4(w[1]) * load4(cell[1] + k0) + splat4(w[2]) * load4(cell[2] + k0) +
        splat4(w[3]) * load4(cell[3] + k0);
  };
  // The terms of the second estimate's window sums at a pixel: a, 1 - a (as 0..255), a x F1 and
  // (1 - a) x B1, with F1 the first estimate and B1 the wide window's mean background. An opaque
  // pixel's F1 is its colour and its B1 has no weight; a transparent one's F1 has none.
  auto terms_at = [&](int x, int y, float *t) {
    const size_t i = size_t(y) * W + x;
    const uint8_t v = alpha[i];
    const uint8_t *I = rgb + i * 3;
    if (v == 255) {
      t[0] = 255, t[1] = 0;
      for (int c = 0; c < 3; c++) t[2 + c] = 255.0f * I[c], t[5 + c] = 0;
      return;
    }
    Floats4 F, B;
    sums_at(x, y, 4, B);
    float B1[3];
    for (int c = 0; c < 3; c++) B1[c] = B[0] > 0 ? B[1 + c] / B[0] : whole_b[c];
    if (v == 0) {
      t[0] = 0, t[1] = 255;
      for (int c = 0; c < 3; c++) t[2 + c] = 0, t[5 + c] = 255 * B1[c];
      return;
    }
    sums_at(x, y, 0, F);
    const float wa = v, wb = 255 - wa, a = v * (1.0f / 255);
    t[0] = wa, t[1] = wb;
    for (int c = 0; c < 3; c++) {
      const float mean_f = F[0] > 0 ? F[1 + c] / F[0] : whole_f[c];
      t[2 + c] = wa * std::clamp(fused(mean_f, B1[c], a, I[c]), 0.0f, 255.0f);
      t[5 + c] = wb * B1[c];
    }
  };

  const int n = p.narrow;
  for_bands(H, kForegroundBandRows, [&](int y0, int y1) {
    // Runs of 0 and of 255 are written as they are found; the partial pixels are kept for after.
    // A transparent pixel's colour is its cell's mean subject colour: a row of cells' colours is
    // laid out pixel by pixel once, then copied run by run.
    std::vector<uint8_t> transparent(size_t(W) * 4);
    int transparent_row = -1;
    std::vector<int> partial;  // x, y of each partial pixel of the band
    for (int y = y0; y < y1; y++) {
      const uint8_t *A = alpha + size_t(y) * W;
      const uint8_t *I = rgb + size_t(y) * W * 3;
      uint8_t *O = out + size_t(y) * W * 4;
      for (int x = 0; x < W;) {
        const uint8_t v = A[x];
        if (v == 255) {
          const int len = run_of(A + x, W - x, 255);
          opaque_run(I + size_t(x) * 3, O + size_t(x) * 4, len);
          x += len;
        } else if (v == 0) {
          const int len = run_of(A + x, W - x, 0);
          const int cy = std::min(g.h - 1, y / g.s);
          if (cy != transparent_row) {
            for (int cx = 0; cx < g.w; cx++) {
              const float *S = g.at(cx, cy);
              uint8_t colour[4] = {0, 0, 0, 0};
              for (int c = 0; c < 3; c++) colour[c] = to_byte(S[0] > 0 ? S[1 + c] / S[0] : whole_f[c]);
              const int x1 = std::min(W, (cx + 1) * g.s);
              for (int xx = cx * g.s; xx < x1; xx++) std::memcpy(&transparent[size_t(xx) * 4], colour, 4);
            }
            transparent_row = cy;
          }
          std::memcpy(O + size_t(x) * 4, &transparent[size_t(x) * 4], size_t(len) * 4);
          x += len;
        } else {
          partial.push_back(x), partial.push_back(y);
          x++;
        }
      }
    }
    if (partial.empty()) return;
    // Columns within n of a partial pixel of the band: only there are the terms needed, kept in a
    // compact plane of those columns.
    std::vector<int> column(W + 1, 0), columns;
    for (size_t k = 0; k < partial.size(); k += 2) {
      const int x = partial[k];
      column[std::max(0, x - n)]++, column[std::min(W, x + n + 1)]--;
    }
    for (int x = 0, open = 0; x < W; x++) {
      open += column[x];
      column[x] = open > 0 ? int(columns.size()) : -1;
      if (open > 0) columns.push_back(x);
    }
    const size_t nc = columns.size();
    const int r0 = std::max(0, y0 - n), r1 = std::min(H, y1 + n);
    std::unique_ptr<float[]> terms(new float[size_t(r1 - r0) * nc * kSums]);
    for (int y = r0; y < r1; y++)
      for (size_t col = 0; col < nc; col++) terms_at(columns[col], y, &terms[(size_t(y - r0) * nc + col) * kSums]);
    // The second estimate: the narrow window's means of F1 (weighted by a) and B1 (by 1 - a), from
    // the sums of each column's 2n + 1 rows (once a row and column), then across 2n + 1 columns.
    std::vector<Doubles2> down(nc * 4);
    std::vector<int> down_row(nc, -1);
    for (size_t k = 0; k < partial.size(); k += 2) {
      const int x = partial[k], y = partial[k + 1];
      const int qx0 = std::max(0, x - n), qx1 = std::min(W, x + n + 1);
      const int qy0 = std::max(0, y - n), qy1 = std::min(H, y + n + 1);
      Doubles2 sum[4] = {};
      for (int qx = qx0; qx < qx1; qx++) {
        const int col = column[qx];
        Doubles2 *d = &down[size_t(col) * 4];
        if (down_row[col] != y) {
          d[0] = d[1] = d[2] = d[3] = Doubles2{0, 0};
          for (int qy = qy0; qy < qy1; qy++) {
            const float *t = &terms[(size_t(qy - r0) * nc + col) * kSums];
            for (int m = 0; m < 4; m++) d[m] += Doubles2{t[2 * m], t[2 * m + 1]};
          }
          down_row[col] = y;
        }
        for (int m = 0; m < 4; m++) sum[m] += d[m];
      }
      // sum: a, 1 - a, a F1 (RGB), (1 - a) B1 (RGB), two at a time.
      const double sa = sum[0][0], sb = sum[0][1];
      const double sf[3] = {sum[1][0], sum[1][1], sum[2][0]}, sbg[3] = {sum[2][1], sum[3][0], sum[3][1]};
      const size_t i = size_t(y) * W + x;
      const float a = alpha[i] * (1.0f / 255);
      for (int c = 0; c < 3; c++)
        out[i * 4 + c] = to_byte(fused(float(sf[c] / sa), float(sbg[c] / sb), a, rgb[i * 3 + c]));
      out[i * 4 + 3] = alpha[i];
    }
  }, budget);
}

}  // namespace matte
