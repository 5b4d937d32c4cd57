#include "guided_filter.h"

#include "refine_bands.h"

#include <algorithm>

namespace matte {

// The mean over the (2r+1)^2 window clipped to the image, in place: running sums along each row,
// then running sums of whole rows (row by row, so that memory is read in order), O(1) a pixel
// whatever r.
void box_mean(std::vector<float> &plane, int w, int h, int r, std::vector<float> &scratch) {
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
      row[x] = float(run / (std::min(w - 1, x + r) - std::max(0, x - r) + 1));
    }
  }
  std::fill(sum, sum + w, 0.0f);
  for (int y = 0; y < std::min(h, r); y++)
    for (int x = 0; x < w; x++) sum[x] += rows[size_t(y) * w + x];
  for (int y = 0; y < h; y++) {
    if (y + r < h) {
      const float *add = rows + size_t(y + r) * w;
      for (int x = 0; x < w; x++) sum[x] += add[x];
    }
    if (y - r - 1 >= 0) {
      const float *sub = rows + size_t(y - r - 1) * w;
      for (int x = 0; x < w; x++) sum[x] -= sub[x];
    }
    const float n = float(std::min(h - 1, y + r) - std::max(0, y - r) + 1);
    float *out = &plane[size_t(y) * w];
    for (int x = 0; x < w; x++) out[x] = sum[x] / n;
  }
}

GuidedCoefficients guided_coefficients(const uint8_t *rgb, const std::vector<uint8_t> &matte, int w, int h,
                                       int r, float eps, Budget *budget) {
  const size_t n = size_t(w) * h;
  // Window means of I (3), p, I*I (6: rr rg rb gg gb bb) and I*p (3).
  std::vector<std::vector<float>> m(13, std::vector<float>(n));
  for (size_t i = 0; i < n; i++) {
    const float R = rgb[i * 3] * (1.0f / 255), G = rgb[i * 3 + 1] * (1.0f / 255), B = rgb[i * 3 + 2] * (1.0f / 255);
    const float p = matte[i] * (1.0f / 255);
    m[0][i] = R, m[1][i] = G, m[2][i] = B, m[3][i] = p;
    m[4][i] = R * R, m[5][i] = R * G, m[6][i] = R * B, m[7][i] = G * G, m[8][i] = G * B, m[9][i] = B * B;
    m[10][i] = R * p, m[11][i] = G * p, m[12][i] = B * p;
  }
  // The planes are independent: one a band on the job's threads, each with its own scratch.
  for_bands(int(m.size()), 1, [&](int first, int end) {
    std::vector<float> scratch;
    for (int i = first; i < end; i++) box_mean(m[i], w, h, r, scratch);
  }, budget);

  GuidedCoefficients c;
  c.a.resize(n * 3);
  c.b.resize(n);
  std::vector<float> a0(n), a1(n), a2(n);
  for (size_t i = 0; i < n; i++) {
    const float mr = m[0][i], mg = m[1][i], mb = m[2][i], mp = m[3][i];
    // The colour covariance (plus eps on the diagonal) and the colour-matte covariance.
    const float srr = m[4][i] - mr * mr + eps, srg = m[5][i] - mr * mg, srb = m[6][i] - mr * mb;
    const float sgg = m[7][i] - mg * mg + eps, sgb = m[8][i] - mg * mb, sbb = m[9][i] - mb * mb + eps;
    const float cr = m[10][i] - mr * mp, cg = m[11][i] - mg * mp, cb = m[12][i] - mb * mp;
    // Inverse of the symmetric 3x3 matrix by its adjugate.
    const float i00 = sgg * sbb - sgb * sgb, i01 = srb * sgb - srg * sbb, i02 = srg * sgb - srb * sgg;
    const float i11 = srr * sbb - srb * srb, i12 = srb * srg - srr * sgb, i22 = srr * sgg - srg * srg;
    const float det = srr * i00 + srg * i01 + srb * i02;
    const float inv = det > 1e-30f ? 1.0f / det : 0.0f;
    a0[i] = (i00 * cr + i01 * cg + i02 * cb) * inv;
    a1[i] = (i01 * cr + i11 * cg + i12 * cb) * inv;
    a2[i] = (i02 * cr + i12 * cg + i22 * cb) * inv;
    c.b[i] = mp - a0[i] * mr - a1[i] * mg - a2[i] * mb;
  }
  m.clear();
  std::vector<float> *coefficients[4] = {&a0, &a1, &a2, &c.b};
  for_bands(4, 1, [&](int first, int end) {
    std::vector<float> scratch;
    for (int i = first; i < end; i++) box_mean(*coefficients[i], w, h, r, scratch);
  }, budget);
  for (size_t i = 0; i < n; i++) c.a[i * 3] = a0[i], c.a[i * 3 + 1] = a1[i], c.a[i * 3 + 2] = a2[i];
  return c;
}

}  // namespace matte
