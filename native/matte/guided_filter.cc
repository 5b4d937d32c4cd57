// The window means are running sums (O(1) a pixel whatever the radius), and the coefficients are
// the same floats whatever the thread count or the order the work is split in: every running sum
// is taken in the same order as a plain row-then-column pass over the whole plane, except the row
// sums of the first stage, which are exact (below) and so the same in any order.
#include "guided_filter.h"

#include "floats4.h"
#include "refine_bands.h"

#include <algorithm>

namespace matte {

namespace {

// sum[x] += add[x] (add may be null), then sum[x] -= sub[x] (sub may be null), then
// out[x] = sum[x] / n: one row of a column pass.
void column_step(float *sum, const float *add, const float *sub, float *out, int w, float n) {
  int x = 0;
  const Floats4 n4 = splat4(n);
  for (; x + 4 <= w; x += 4) {
    Floats4 s = load4(sum + x);
    if (add) s += load4(add + x);
    if (sub) s -= load4(sub + x);
    store4(sum + x, s);
    store4(out + x, s / n4);
  }
  for (; x < w; x++) {
    if (add) sum[x] += add[x];
    if (sub) sum[x] -= sub[x];
    out[x] = sum[x] / n;
  }
}

// The number of rows (columns) of the window around y clipped to [0, h).
inline int window(int y, int h, int r) { return std::min(h - 1, y + r) - std::max(0, y - r) + 1; }

// The first stage's 13 planes: R, G, B, p and the products RR, RG, RB, GG, GB, BB, Rp, Gp, Bp
// (colours and matte in 0..1).
constexpr int kTerms = 13;
inline void terms_of(const uint8_t *rgb, uint8_t matte, float *t) {
  const float R = rgb[0] * (1.0f / 255), G = rgb[1] * (1.0f / 255), B = rgb[2] * (1.0f / 255);
  const float p = matte * (1.0f / 255);
  t[0] = R, t[1] = G, t[2] = B, t[3] = p;
  t[4] = R * R, t[5] = R * G, t[6] = R * B, t[7] = G * G, t[8] = G * B, t[9] = B * B;
  t[10] = R * p, t[11] = G * p, t[12] = B * p;
}

}  // namespace

// The mean over the (2r+1)^2 window clipped to the image, in place: running sums along each row,
// then running sums of whole rows (row by row, so that memory is read in order), O(1) a pixel
// whatever r.
void box_mean(LargeVector<float> &plane, int w, int h, int r, LargeVector<float> &scratch) {
  scratch.resize(size_t(w) * (h + 1));
  float *rows = scratch.data();                 // the row-filtered plane (h rows)
  float *sum = scratch.data() + size_t(w) * h;  // the running vertical sum (one row)
  for (int y = 0; y < h; y++) {
    const float *in = &plane[size_t(y) * w];
    float *row = rows + size_t(y) * w;
    double run = 0;
    for (int x = 0; x < std::min(w, r); x++) run += in[x];
    for (int x = 0; x < w; x++) {
      if (x + r < w) run += in[x + r];
      if (x - r - 1 >= 0) run -= in[x - r - 1];
      row[x] = float(run / window(x, w, r));
    }
  }
  std::fill(sum, sum + w, 0.0f);
  for (int y = 0; y < std::min(h, r); y++)
    for (int x = 0; x < w; x++) sum[x] += rows[size_t(y) * w + x];
  for (int y = 0; y < h; y++)
    column_step(sum, y + r < h ? rows + size_t(y + r) * w : nullptr,
                y - r - 1 >= 0 ? rows + size_t(y - r - 1) * w : nullptr, &plane[size_t(y) * w], w, float(window(y, h, r)));
}

GuidedCoefficients guided_coefficients(const uint8_t *rgb, const std::vector<uint8_t> &matte, int w, int h,
                                       int r, float eps, Budget *budget) {
  const size_t n = size_t(w) * h;
  // At IS-Net's 1024x1024, 4 MB a plane, made afresh each job: LargeVector (huge_pages.h).
  LargeVector<float> a0(n), a1(n), a2(n), b(n);
  // The first stage, in strips of columns, all 13 planes together and row by row, so that only
  // 2r + 2 row-filtered rows of each are ever kept (no full-size plane). Its row sums are exact in
  // double (every term is a multiple of 2^-40 below 2, a window's sum below 2^4: 44 bits), so a
  // strip may start its sums at its own first column and give the same floats as a pass over the
  // whole row; its column sums are the plain pass's, column by column.
  constexpr int kStrip = 128;
  const int slots = 2 * r + 2;
  for_bands(w, kStrip, [&](int x0, int x1) {
    const int sw = x1 - x0, lo = std::max(0, x0 - r), hi = std::min(w, x1 + r);
    std::vector<float> terms(size_t(hi - lo) * kTerms);      // one input row, [x][term]
    std::vector<float> ring(size_t(slots) * kTerms * sw);    // row-filtered rows, [slot][term][x]
    std::vector<float> sum(size_t(kTerms) * sw, 0.0f), mean(size_t(kTerms) * sw);
    // The row-filtered row y into its ring slot.
    auto filter_row = [&](int y) {
      for (int x = lo; x < hi; x++) {
        const size_t i = size_t(y) * w + x;
        terms_of(rgb + i * 3, matte[i], &terms[size_t(x - lo) * kTerms]);
      }
      float *out = &ring[size_t(y % slots) * kTerms * sw];
      double run[kTerms] = {};
      for (int x = std::max(0, x0 - r); x <= std::min(w - 1, x0 + r); x++)
        for (int t = 0; t < kTerms; t++) run[t] += terms[size_t(x - lo) * kTerms + t];
      for (int x = x0; x < x1; x++) {
        if (x > x0) {
          if (x + r < w)
            for (int t = 0; t < kTerms; t++) run[t] += terms[size_t(x + r - lo) * kTerms + t];
          if (x - r - 1 >= 0)
            for (int t = 0; t < kTerms; t++) run[t] -= terms[size_t(x - r - 1 - lo) * kTerms + t];
        }
        const double count = window(x, w, r);
        for (int t = 0; t < kTerms; t++) out[size_t(t) * sw + (x - x0)] = float(run[t] / count);
      }
    };
    auto slot = [&](int y, int t) { return &ring[(size_t(y % slots) * kTerms + t) * sw]; };
    for (int y = 0; y < std::min(h, r); y++) {
      filter_row(y);
      for (int t = 0; t < kTerms; t++) {
        const float *row = slot(y, t);
        float *s = &sum[size_t(t) * sw];
        for (int x = 0; x < sw; x++) s[x] += row[x];
      }
    }
    for (int y = 0; y < h; y++) {
      if (y + r < h) filter_row(y + r);
      const float count = float(window(y, h, r));
      for (int t = 0; t < kTerms; t++)
        column_step(&sum[size_t(t) * sw], y + r < h ? slot(y + r, t) : nullptr, y - r - 1 >= 0 ? slot(y - r - 1, t) : nullptr,
                    &mean[size_t(t) * sw], sw, count);
      const float *m[kTerms];
      for (int t = 0; t < kTerms; t++) m[t] = &mean[size_t(t) * sw];
      for (int k = 0; k < sw; k++) {
        const size_t i = size_t(y) * w + x0 + k;
        const float mr = m[0][k], mg = m[1][k], mb = m[2][k], mp = m[3][k];
        // The colour covariance (plus eps on the diagonal) and the colour-matte covariance.
        const float srr = m[4][k] - mr * mr + eps, srg = m[5][k] - mr * mg, srb = m[6][k] - mr * mb;
        const float sgg = m[7][k] - mg * mg + eps, sgb = m[8][k] - mg * mb, sbb = m[9][k] - mb * mb + eps;
        const float cr = m[10][k] - mr * mp, cg = m[11][k] - mg * mp, cb = m[12][k] - mb * mp;
        // Inverse of the symmetric 3x3 matrix by its adjugate.
        const float i00 = sgg * sbb - sgb * sgb, i01 = srb * sgb - srg * sbb, i02 = srg * sgb - srb * sgg;
        const float i11 = srr * sbb - srb * srb, i12 = srb * srg - srr * sgb, i22 = srr * sgg - srg * srg;
        const float det = srr * i00 + srg * i01 + srb * i02;
        const float inv = det > 1e-30f ? 1.0f / det : 0.0f;
        a0[i] = (i00 * cr + i01 * cg + i02 * cb) * inv;
        a1[i] = (i01 * cr + i11 * cg + i12 * cb) * inv;
        a2[i] = (i02 * cr + i12 * cg + i22 * cb) * inv;
        b[i] = mp - a0[i] * mr - a1[i] * mg - a2[i] * mb;
      }
    }
  }, budget);

  // The second stage: the coefficients averaged over the windows covering each pixel, one plane a
  // band (their row sums are not exact: each row is summed from its first column, as box_mean does).
  LargeVector<float> *coefficients[4] = {&a0, &a1, &a2, &b};
  for_bands(4, 1, [&](int first, int end) {
    LargeVector<float> scratch;
    for (int i = first; i < end; i++) box_mean(*coefficients[i], w, h, r, scratch);
  }, budget);
  GuidedCoefficients c;
  c.a.resize(n * 3);
  for (size_t i = 0; i < n; i++) c.a[i * 3] = a0[i], c.a[i * 3 + 1] = a1[i], c.a[i * 3 + 2] = a2[i];
  c.b = std::move(b);
  return c;
}

}  // namespace matte
