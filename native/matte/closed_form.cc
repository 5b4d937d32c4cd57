// The matting Laplacian is never built: its product with a vector is computed from the 3x3 windows
// directly (He, Sun, Tang, "Fast matting using large kernel matting Laplacian matrices", CVPR 2010,
// with their radius 1): for a window k with mean colour mu_k, colour covariance S_k and n_k pixels,
//   a_k = (S_k + eps/n_k I)^-1 (mean_k(I x) - mu_k mean_k(x)),  b_k = mean_k(x) - a_k . mu_k,
//   (L x)_i = n_i x_i - sum_{k containing i} (a_k . I_i + b_k),
// which is symmetric (the clipped border windows included), so conjugate gradients apply. Every
// pass over the pixels runs in bands of rows on the job's threads, writing only its own rows; the
// dot products are summed per row, then over the rows in order, so the result does not depend on
// the thread count.
#include "closed_form.h"

#include "../budget.h"
#include "dilate_row.h"
#include "guided_filter.h"
#include "refine_bands.h"
#include "taps.h"

#include <algorithm>
#include <cmath>

namespace matte {

namespace {

// The mask dilated by a (2r+1)^2 square: along the rows, then across them (each band of rows
// writes only its own rows).
std::vector<uint8_t> dilate(const std::vector<uint8_t> &mask, int w, int h, int r, Budget *budget) {
  if (r <= 0) return mask;
  std::vector<uint8_t> rows(mask.size(), 0), out(mask.size(), 0);
  for_row_bands(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; y++) {
      dilate_row(&mask[size_t(y) * w], &rows[size_t(y) * w], w, r);
    }
  }, budget);
  for_row_bands(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; y++) {
      uint8_t *o = &out[size_t(y) * w];
      for (int yy = std::max(0, y - r); yy <= std::min(h - 1, y + r); yy++) {
        const uint8_t *in = &rows[size_t(yy) * w];
        for (int x = 0; x < w; x++) o[x] |= in[x];
      }
    }
  }, budget);
  return out;
}

std::vector<uint8_t> erode(const std::vector<uint8_t> &mask, int w, int h, int r, Budget *budget) {
  std::vector<uint8_t> inverse(mask.size());
  for (size_t i = 0; i < mask.size(); i++) inverse[i] = !mask[i];
  std::vector<uint8_t> out = dilate(inverse, w, h, r, budget);
  for (uint8_t &v : out) v = !v;
  return out;
}

// The pixels of a mask, row by row: positions[y] lists the x of row y, start[y] the index of its
// first one in the whole list.
struct Rows {
  std::vector<std::vector<int>> x;
  std::vector<size_t> start;
  size_t count = 0;
};
Rows rows_of(const std::vector<uint8_t> &mask, int w, int h) {
  Rows r;
  r.x.resize(h), r.start.resize(h + 1);
  for (int y = 0; y < h; y++) {
    r.start[y] = r.count;
    for (int x = 0; x < w; x++)
      if (mask[size_t(y) * w + x]) r.x[y].push_back(x);
    r.count += r.x[y].size();
  }
  r.start[h] = r.count;
  return r;
}

// The matting Laplacian restricted to the unknowns (the band): only the 3x3 windows that touch
// the band are ever formed, so the cost follows the band, not the image.
class Solver {
 public:
  Solver(const std::vector<float> &I, int w, int h, const std::vector<uint8_t> &band, float eps, Budget *budget)
      : I_(I), w_(w), h_(h), budget_(budget) {
    unknowns_ = rows_of(band, w, h);
    windows_ = rows_of(dilate(band, w, h, 1, budget), w, h);
    window_index_.assign(size_t(w) * h, -1);
    for (int y = 0; y < h; y++)
      for (size_t j = 0; j < windows_.x[y].size(); j++)
        window_index_[size_t(y) * w + windows_.x[y][j]] = int(windows_.start[y] + j);
    const size_t nw = windows_.count;
    mu_.resize(nw * 3), inv_.resize(nw * 6), n_.resize(nw), ab_.resize(nw * 4);
    for_row_bands(h, [&](int y0, int y1) {
      for (int y = y0; y < y1; y++)
        for (size_t j = 0; j < windows_.x[y].size(); j++) {
          const int x = windows_.x[y][j];
          double s[3] = {0, 0, 0}, ss[6] = {0, 0, 0, 0, 0, 0};
          int count = 0;
          for (int yy = std::max(0, y - 1); yy <= std::min(h - 1, y + 1); yy++)
            for (int xx = std::max(0, x - 1); xx <= std::min(w - 1, x + 1); xx++) {
              const float *c = &I[(size_t(yy) * w + xx) * 3];
              s[0] += c[0], s[1] += c[1], s[2] += c[2];
              ss[0] += c[0] * c[0], ss[1] += c[0] * c[1], ss[2] += c[0] * c[2];
              ss[3] += c[1] * c[1], ss[4] += c[1] * c[2], ss[5] += c[2] * c[2];
              count++;
            }
          const size_t k = windows_.start[y] + j;
          const double m0 = s[0] / count, m1 = s[1] / count, m2 = s[2] / count, e = eps / count;
          const double rr = ss[0] / count - m0 * m0 + e, rg = ss[1] / count - m0 * m1, rb = ss[2] / count - m0 * m2;
          const double gg = ss[3] / count - m1 * m1 + e, gb = ss[4] / count - m1 * m2, bb = ss[5] / count - m2 * m2 + e;
          const double i00 = gg * bb - gb * gb, i01 = rb * gb - rg * bb, i02 = rg * gb - rb * gg;
          const double i11 = rr * bb - rb * rb, i12 = rb * rg - rr * gb, i22 = rr * gg - rg * rg;
          const double det = rr * i00 + rg * i01 + rb * i02;
          const double inv = det > 1e-300 ? 1.0 / det : 0.0;
          mu_[k * 3] = float(m0), mu_[k * 3 + 1] = float(m1), mu_[k * 3 + 2] = float(m2);
          float *v = &inv_[k * 6];
          v[0] = float(i00 * inv), v[1] = float(i01 * inv), v[2] = float(i02 * inv);
          v[3] = float(i11 * inv), v[4] = float(i12 * inv), v[5] = float(i22 * inv);
          n_[k] = uint8_t(count);
        }
    }, budget);
  }

  const Rows &unknowns() const { return unknowns_; }

  // The diagonal of L at the unknowns (for the Jacobi preconditioner).
  std::vector<float> diagonal() const {
    std::vector<float> d(unknowns_.count);
    for_row_bands(h_, [&](int y0, int y1) {
      for (int y = y0; y < y1; y++)
        for (size_t j = 0; j < unknowns_.x[y].size(); j++) {
          const int x = unknowns_.x[y][j];
          const float *c = &I_[(size_t(y) * w_ + x) * 3];
          double sum = 0;
          for (int ky = std::max(0, y - 1); ky <= std::min(h_ - 1, y + 1); ky++)
            for (int kx = std::max(0, x - 1); kx <= std::min(w_ - 1, x + 1); kx++) {
              const size_t k = size_t(window_index_[size_t(ky) * w_ + kx]);
              const float *m = &mu_[k * 3], *v = &inv_[k * 6];
              const float d0 = c[0] - m[0], d1 = c[1] - m[1], d2 = c[2] - m[2];
              const float q = d0 * (v[0] * d0 + v[1] * d1 + v[2] * d2) + d1 * (v[1] * d0 + v[3] * d1 + v[4] * d2) +
                              d2 * (v[2] * d0 + v[4] * d1 + v[5] * d2);
              sum += 1.0 - (1.0 + q) / n_[k];
            }
          d[unknowns_.start[y] + j] = float(sum);
        }
    }, budget_);
    return d;
  }

  // out = (L x) at the unknowns; x is a whole working-size plane.
  void laplacian(const std::vector<float> &x, std::vector<float> &out) {
    for_row_bands(h_, [&](int y0, int y1) {
      for (int ky = y0; ky < y1; ky++)
        for (size_t j = 0; j < windows_.x[ky].size(); j++) {
          const int kx = windows_.x[ky][j];
          float sx = 0, sr = 0, sg = 0, sb = 0;
          for (int yy = std::max(0, ky - 1); yy <= std::min(h_ - 1, ky + 1); yy++)
            for (int xx = std::max(0, kx - 1); xx <= std::min(w_ - 1, kx + 1); xx++) {
              const size_t i = size_t(yy) * w_ + xx;
              const float v = x[i];
              const float *c = &I_[i * 3];
              sx += v, sr += c[0] * v, sg += c[1] * v, sb += c[2] * v;
            }
          const size_t k = windows_.start[ky] + j;
          const float inv_n = 1.0f / n_[k];
          const float *m = &mu_[k * 3], *v = &inv_[k * 6];
          const float xm = sx * inv_n;
          const float c0 = sr * inv_n - m[0] * xm, c1 = sg * inv_n - m[1] * xm, c2 = sb * inv_n - m[2] * xm;
          float *ab = &ab_[k * 4];
          ab[0] = v[0] * c0 + v[1] * c1 + v[2] * c2;
          ab[1] = v[1] * c0 + v[3] * c1 + v[4] * c2;
          ab[2] = v[2] * c0 + v[4] * c1 + v[5] * c2;
          ab[3] = xm - ab[0] * m[0] - ab[1] * m[1] - ab[2] * m[2];
        }
    }, budget_);
    for_row_bands(h_, [&](int y0, int y1) {
      for (int py = y0; py < y1; py++)
        for (size_t j = 0; j < unknowns_.x[py].size(); j++) {
          const int px = unknowns_.x[py][j];
          float A0 = 0, A1 = 0, A2 = 0, B = 0;
          int count = 0;
          for (int ky = std::max(0, py - 1); ky <= std::min(h_ - 1, py + 1); ky++)
            for (int kx = std::max(0, px - 1); kx <= std::min(w_ - 1, px + 1); kx++) {
              const float *ab = &ab_[size_t(window_index_[size_t(ky) * w_ + kx]) * 4];
              A0 += ab[0], A1 += ab[1], A2 += ab[2], B += ab[3];
              count++;
            }
          const size_t i = size_t(py) * w_ + px;
          const float *c = &I_[i * 3];
          out[unknowns_.start[py] + j] = count * x[i] - (A0 * c[0] + A1 * c[1] + A2 * c[2] + B);
        }
    }, budget_);
  }

  // sum a_i b_i over the unknowns, the same whatever the thread count (per row, then the rows in
  // order).
  double dot(const std::vector<float> &a, const std::vector<float> &b) const {
    std::vector<double> rows(h_);
    for_row_bands(h_, [&](int y0, int y1) {
      for (int y = y0; y < y1; y++) {
        double s = 0;
        for (size_t i = unknowns_.start[y]; i < unknowns_.start[y + 1]; i++) s += double(a[i]) * b[i];
        rows[y] = s;
      }
    }, budget_);
    double s = 0;
    for (double r : rows) s += r;
    return s;
  }

 private:
  const std::vector<float> &I_;
  int w_, h_;
  Budget *budget_;
  Rows unknowns_, windows_;
  std::vector<int> window_index_;
  std::vector<float> mu_, inv_, ab_;
  std::vector<uint8_t> n_;
};

}  // namespace

void solve_closed_form(uint8_t *alpha, const uint8_t *rgb, int W, int H, const ClosedFormParams &p,
                       Budget *budget) {
  if (p.cap <= 0 || W < 3 || H < 3) return;
  // The working size: the image's, or smaller with the same aspect, at most `cap` pixels.
  const double s = std::min(1.0, std::sqrt(double(p.cap) / (double(W) * H)));
  const int w = std::max(3, int(std::lround(W * s))), h = std::max(3, int(std::lround(H * s)));
  const bool full = w == W && h == H;
  const size_t n = size_t(w) * h;

  // The image and the prior at the working size: area means (each working pixel the mean of the
  // full-resolution pixels it covers).
  std::vector<float> I(n * 3), prior(n);
  std::vector<uint8_t> small_rgb(full ? 0 : n * 3);
  for_row_bands(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; y++) {
      const int fy0 = int(int64_t(y) * H / h), fy1 = std::max(fy0 + 1, int(int64_t(y + 1) * H / h));
      for (int x = 0; x < w; x++) {
        const int fx0 = int(int64_t(x) * W / w), fx1 = std::max(fx0 + 1, int(int64_t(x + 1) * W / w));
        double c[3] = {0, 0, 0}, a = 0;
        for (int yy = fy0; yy < fy1; yy++)
          for (int xx = fx0; xx < fx1; xx++) {
            const size_t j = size_t(yy) * W + xx;
            c[0] += rgb[j * 3], c[1] += rgb[j * 3 + 1], c[2] += rgb[j * 3 + 2], a += alpha[j];
          }
        const double count = double(fy1 - fy0) * (fx1 - fx0);
        const size_t i = size_t(y) * w + x;
        for (int k = 0; k < 3; k++) {
          I[i * 3 + k] = float(c[k] / count / 255);
          if (!full) small_rgb[i * 3 + k] = uint8_t(std::lround(c[k] / count));
        }
        prior[i] = float(a / count / 255);
      }
    }
  }, budget);

  // The unsure band: where the prior is unsure and the unsure region is wide (it survives an
  // opening by `open` pixels: fur, hair, grass, not the thin transition of a hard edge, which the
  // edge-colour step resolves), dilated by `grow`.
  std::vector<uint8_t> unsure(n, 0);
  for (size_t i = 0; i < n; i++) unsure[i] = prior[i] > p.low && prior[i] < p.high;
  const int o = std::max(0, p.open), g = std::max(0, p.grow);
  std::vector<uint8_t> band = o > 0 ? dilate(erode(unsure, w, h, o, budget), w, h, o + g, budget)
                                    : dilate(unsure, w, h, g, budget);
  if (p.wide > 0) {
    // Adaptive: near the matte's outline (within `wide` pixels of a change of side of 0.5), where
    // the image is textured (the local standard deviation of its grey over 5x5 pixels above
    // `texture`), the matte may be sure and still wrong: hair, fur, grass the model filled or cut.
    std::vector<uint8_t> crossing(n, 0);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        const size_t i = size_t(y) * w + x;
        const bool in = prior[i] >= 0.5f;
        crossing[i] = (x + 1 < w && (prior[i + 1] >= 0.5f) != in) || (y + 1 < h && (prior[i + w] >= 0.5f) != in);
      }
    std::vector<uint8_t> near = dilate(crossing, w, h, p.wide, budget);
    LargeVector<float> grey(n), grey2(n);
    for (size_t i = 0; i < n; i++) {
      const float g1 = (I[i * 3] + I[i * 3 + 1] + I[i * 3 + 2]) * (1.0f / 3);
      grey[i] = g1, grey2[i] = g1 * g1;
    }
    LargeVector<float> scratch;
    box_mean(grey, w, h, 2, scratch);
    box_mean(grey2, w, h, 2, scratch);
    const float t2 = p.texture * p.texture;
    for (size_t i = 0; i < n; i++)
      if (near[i] && grey2[i] - grey[i] * grey[i] > t2) band[i] = 1;
  }
  bool any = false;
  for (size_t i = 0; i < n && !any; i++) any = band[i];
  if (!any) return;

  // The unknowns (the band) minimise x^T L x + c (x - prior)^2 with the pixels outside the band
  // held at the prior (the boundary conditions): (L + c) x_B = c prior_B - L_BK prior_K, solved
  // from x = prior by conjugate gradients with the Jacobi preconditioner.
  Solver solver(I, w, h, band, p.eps, budget);
  const Rows &unknowns = solver.unknowns();
  const size_t nb = unknowns.count;
  std::vector<size_t> at(nb);  // each unknown's pixel
  for (int y = 0; y < h; y++)
    for (size_t j = 0; j < unknowns.x[y].size(); j++) at[unknowns.start[y] + j] = size_t(y) * w + unknowns.x[y][j];
  const float c = p.unsure;
  std::vector<float> precond = solver.diagonal();
  for (float &v : precond) v = 1.0f / std::max(1e-6f, v + c);
  std::vector<float> x(prior), d(n, 0.0f), r(nb), z(nb), q(nb), d_unknowns(nb);
  // With x = prior the data term's residual is 0: r = -L prior at the unknowns.
  solver.laplacian(x, q);
  for (size_t i = 0; i < nb; i++) r[i] = -q[i], z[i] = precond[i] * r[i], d[at[i]] = z[i];
  double rz = solver.dot(r, z);
  for (int it = 0; it < p.iterations && rz > 1e-20; it++) {
    if (budget) budget->check();
    solver.laplacian(d, q);
    for (size_t i = 0; i < nb; i++) q[i] += c * d[at[i]];
    for (size_t i = 0; i < nb; i++) d_unknowns[i] = d[at[i]];
    const double dq = solver.dot(d_unknowns, q);
    if (!(dq > 0)) break;
    const float step = float(rz / dq);
    for (size_t i = 0; i < nb; i++) x[at[i]] += step * d[at[i]], r[i] -= step * q[i], z[i] = precond[i] * r[i];
    const double rz_next = solver.dot(r, z);
    const float beta = float(rz_next / rz);
    rz = rz_next;
    for (size_t i = 0; i < nb; i++) d[at[i]] = z[i] + beta * d[at[i]];
  }

  if (full) {
    for (size_t i = 0; i < n; i++)
      if (band[i]) alpha[i] = uint8_t(std::lround(std::clamp(x[i], 0.0f, 1.0f) * 255));
    return;
  }
  // Carried to full size by the guided filter: fitted on the working image and the solution,
  // applied to the full-resolution colours where the working band covers.
  std::vector<uint8_t> solved(n);
  for (size_t i = 0; i < n; i++) solved[i] = uint8_t(std::lround(std::clamp(x[i], 0.0f, 1.0f) * 255));
  GuidedCoefficients guided = guided_coefficients(small_rgb.data(), solved, w, h, p.up_radius, p.up_eps, budget);
  Taps tx = taps(W, w), ty = taps(H, h);
  for_row_bands(H, [&](int y0, int y1) {
    for (int y = y0; y < y1; y++) {
      const int r0 = ty.i0[y] * w, r1 = ty.i1[y] * w;
      const float fy = ty.f[y];
      for (int xx = 0; xx < W; xx++) {
        const int c0 = tx.i0[xx], c1 = tx.i1[xx];
        const size_t k[4] = {size_t(r0 + c0), size_t(r0 + c1), size_t(r1 + c0), size_t(r1 + c1)};
        if (!(band[k[0]] | band[k[1]] | band[k[2]] | band[k[3]])) continue;
        const float fx = tx.f[xx];
        const float wt[4] = {(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy};
        const uint8_t *c = rgb + (size_t(y) * W + xx) * 3;
        float a = 0;
        for (int j = 0; j < 4; j++) {
          const float *aj = &guided.a[k[j] * 3];
          a += wt[j] * ((aj[0] * c[0] + aj[1] * c[1] + aj[2] * c[2]) * (1.0f / 255) + guided.b[k[j]]);
        }
        alpha[size_t(y) * W + xx] = uint8_t(std::lround(std::clamp(a, 0.0f, 1.0f) * 255));
      }
    }
  }, budget);
}

}  // namespace matte
