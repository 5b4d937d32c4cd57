// How the refinement works (bench/quality measures every choice; bench/README.md has the figures):
//
// 1. At the model's resolution, the matte says where the subject surely is (>= sure) and where the
//    background surely is (<= 1 - sure). Box sums over integral images give, for every model pixel,
//    the mean colour of the sure foreground (F) and of the sure background (B) around it.
// 2. The unknown band: model pixels whose value is unsure, or that touch the other side of 0.5,
//    dilated by one model pixel. Only full-resolution pixels that this band covers are refined; the
//    rest keep the (linearly upscaled) model value, so the cost follows the subject's outline, not
//    the image's area.
// 3. In the band, at full resolution, alpha is estimated from the pixel's own colour I as the
//    projection onto the line from B to F: a = (I - B).(F - B) / |F - B|^2 (the compositing
//    equation I = aF + (1 - a)B solved in the least-squares sense). It is trusted in proportion to
//    |F - B| (foreground and background of different colours); where they look alike, the model's
//    value, sharpened around 0.5, is used instead. Edges then follow the image's own edges at the
//    output resolution instead of the blur of an upscaled 320x320 or 1024x1024 matte.
// 4. Cleanup: values within `floor` of 0 become 0, within 255 - `ceiling` of 255 become 255.
#include "refine.h"

#include "../errors.h"
#include "guided_filter.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace matte {

RefineParams refine_params() {
  RefineParams p;
  // For bench/quality's parameter search only (tuned on one half of the composites, reported on
  // the other); not a documented setting.
  const char *text = std::getenv("MATTE_REFINE_PARAMS");
  if (!text) return p;
  std::string all(text);
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find(',', start);
    if (end == std::string::npos) end = all.size();
    std::string item = all.substr(start, end - start);
    size_t eq = item.find('=');
    if (eq != std::string::npos) {
      std::string key = item.substr(0, eq);
      double v = std::atof(item.c_str() + eq + 1);
      if (!std::isfinite(v) || std::fabs(v) > 1e6) v = 0;  // then brought into range below
      if (key == "low") p.band_low = float(v);
      else if (key == "high") p.band_high = float(v);
      else if (key == "grow") p.grow = int(v);
      else if (key == "sure") p.sure = float(v);
      else if (key == "radius") p.radius = int(v);
      else if (key == "separation") p.separation = float(v);
      else if (key == "stretch") p.stretch = float(v);
      else if (key == "fit") p.fit = float(v);
      else if (key == "smooth") p.smooth = int(v);
      else if (key == "floor") p.floor = int(v);
      else if (key == "method") p.method = int(v);
      else if (key == "gradius") p.guided_radius = int(v);
      else if (key == "geps") p.guided_eps = float(v);
      else if (key == "gstretch") p.guided_stretch = float(v);
      else if (key == "ceiling") p.ceiling = int(v);
    }
    start = end + 1;
  }
  // A value out of its range must not reach the loops (a radius of 0, a negative grow, a floor past
  // 255): it is brought back into range, never trusted.
  p.band_low = std::clamp(p.band_low, 0.0f, 1.0f);
  p.band_high = std::clamp(p.band_high, p.band_low, 1.0f);
  p.grow = std::clamp(p.grow, 0, 64);
  p.sure = std::clamp(p.sure, 0.5f, 1.0f);
  p.radius = std::clamp(p.radius, 1, 256);
  p.separation = std::max(p.separation, 1e-3f);
  p.fit = std::max(p.fit, 1e-3f);
  p.smooth = std::clamp(p.smooth, 0, 1);
  p.stretch = std::max(p.stretch, 0.0f);
  p.method = std::clamp(p.method, 0, 1);
  p.guided_radius = std::clamp(p.guided_radius, 1, 64);
  p.guided_eps = std::clamp(p.guided_eps, 1e-8f, 10.0f);
  p.guided_stretch = std::clamp(p.guided_stretch, 0.0f, 100.0f);
  p.floor = std::clamp(p.floor, 0, 255);
  p.ceiling = std::clamp(p.ceiling, p.floor, 255);
  return p;
}

void clean_matte(uint8_t *alpha, size_t count, const RefineParams &params) {
  for (size_t i = 0; i < count; i++) {
    if (alpha[i] <= params.floor) alpha[i] = 0;
    else if (alpha[i] >= params.ceiling) alpha[i] = 255;
  }
}

namespace {

// Per model pixel: the local mean colours of the sure foreground and background, and how much a
// colour estimate there can be trusted (0: not at all).
struct ColourModels {
  std::vector<float> fg, bg;  // 3 values a pixel
  std::vector<float> trust;
};

ColourModels colour_models(const uint8_t *rgb, const std::vector<uint8_t> &matte, int w, int h,
                           const RefineParams &p) {
  const int sure_fg = int(std::ceil(p.sure * 255)), sure_bg = int(std::floor((1 - p.sure) * 255));
  // Integral images of: fg count, fg RGB sums, bg count, bg RGB sums (8 channels).
  const int W = w + 1;
  std::vector<int64_t> sums(size_t(W) * (h + 1) * 8, 0);
  auto at = [&](int x, int y) { return &sums[(size_t(y) * W + x) * 8]; };
  for (int y = 0; y < h; y++) {
    int64_t row[8] = {0};
    for (int x = 0; x < w; x++) {
      size_t i = size_t(y) * w + x;
      const uint8_t *c = rgb + i * 3;
      if (matte[i] >= sure_fg) {
        row[0]++;
        row[1] += c[0], row[2] += c[1], row[3] += c[2];
      } else if (matte[i] <= sure_bg) {
        row[4]++;
        row[5] += c[0], row[6] += c[1], row[7] += c[2];
      }
      int64_t *dst = at(x + 1, y + 1);
      const int64_t *up = at(x + 1, y);
      for (int k = 0; k < 8; k++) dst[k] = up[k] + row[k];
    }
  }
  ColourModels m;
  m.fg.assign(size_t(w) * h * 3, 0);
  m.bg.assign(size_t(w) * h * 3, 0);
  m.trust.assign(size_t(w) * h, 0);
  const int r = std::max(1, p.radius);
  for (int y = 0; y < h; y++) {
    int y0 = std::max(0, y - r), y1 = std::min(h, y + r + 1);
    for (int x = 0; x < w; x++) {
      int x0 = std::max(0, x - r), x1 = std::min(w, x + r + 1);
      int64_t s[8];
      const int64_t *a = at(x1, y1), *b = at(x0, y1), *c = at(x1, y0), *d = at(x0, y0);
      for (int k = 0; k < 8; k++) s[k] = a[k] - b[k] - c[k] + d[k];
      if (!s[0] || !s[4]) continue;
      size_t i = size_t(y) * w + x;
      float dist2 = 0;
      for (int k = 0; k < 3; k++) {
        m.fg[i * 3 + k] = float(s[1 + k]) / s[0];
        m.bg[i * 3 + k] = float(s[5 + k]) / s[4];
        float diff = m.fg[i * 3 + k] - m.bg[i * 3 + k];
        dist2 += diff * diff;
      }
      m.trust[i] = std::min(1.0f, std::sqrt(dist2) / std::max(1.0f, p.separation));
    }
  }
  return m;
}

// Model pixels whose value is unsure or that touch the other side of 0.5, dilated by `grow` pixels.
std::vector<uint8_t> unknown_band(const std::vector<uint8_t> &matte, int w, int h, const RefineParams &p) {
  const int low = int(p.band_low * 255), high = int(std::ceil(p.band_high * 255));
  std::vector<uint8_t> core(size_t(w) * h, 0), band(size_t(w) * h, 0);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      size_t i = size_t(y) * w + x;
      bool inside = matte[i] >= 128;
      bool unsure = matte[i] > low && matte[i] < high;
      bool crosses = (x + 1 < w && (matte[i + 1] >= 128) != inside) || (y + 1 < h && (matte[i + w] >= 128) != inside);
      if (unsure) core[i] = 1;
      if (crosses) {
        core[i] = 1;
        core[x + 1 < w && (matte[i + 1] >= 128) != inside ? i + 1 : i + w] = 1;
      }
    }
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      if (!core[size_t(y) * w + x]) continue;
      for (int dy = -p.grow; dy <= p.grow; dy++)
        for (int dx = -p.grow; dx <= p.grow; dx++) {
          int xx = x + dx, yy = y + dy;
          if (xx >= 0 && xx < w && yy >= 0 && yy < h) band[size_t(yy) * w + xx] = 1;
        }
    }
  return band;
}

// Bilinear sampling positions of a model-resolution row/column for each full-resolution one
// (pixel centres aligned, as libvips' resize does).
struct Taps {
  std::vector<int> i0, i1;
  std::vector<float> f;
};
Taps taps(int full, int model) {
  Taps t;
  t.i0.resize(full), t.i1.resize(full), t.f.resize(full);
  const double scale = double(model) / full;
  for (int x = 0; x < full; x++) {
    double u = std::clamp((x + 0.5) * scale - 0.5, 0.0, double(model - 1));
    int i0 = int(u);
    t.i0[x] = i0;
    t.i1[x] = std::min(i0 + 1, model - 1);
    t.f[x] = float(u - i0);
  }
  return t;
}

// A 3x3 mean over the full-resolution pixels that the band covers (rows read from a copy).
void smooth_band(std::vector<uint8_t> &alpha, int W, int H, const std::vector<uint8_t> &band, const Taps &tx,
                 const Taps &ty, int mw) {
  std::vector<uint8_t> rows(size_t(W) * 3);
  auto row = [&](int y) { return &rows[size_t(y % 3) * W]; };
  std::copy_n(&alpha[0], W, row(0));
  if (H > 1) std::copy_n(&alpha[size_t(W)], W, row(1));
  for (int y = 0; y < H; y++) {
    if (y + 1 < H) std::copy_n(&alpha[size_t(y + 1) * W], W, row(y + 1));
    const int r0 = ty.i0[y] * mw, r1 = ty.i1[y] * mw;
    const uint8_t *up = row(std::max(0, y - 1)), *mid = row(y), *down = row(std::min(H - 1, y + 1));
    for (int x = 0; x < W; x++) {
      const int c0 = tx.i0[x], c1 = tx.i1[x];
      if (!(band[r0 + c0] | band[r0 + c1] | band[r1 + c0] | band[r1 + c1])) continue;
      const int xl = std::max(0, x - 1), xr = std::min(W - 1, x + 1);
      int sum = up[xl] + up[x] + up[xr] + mid[xl] + mid[x] + mid[xr] + down[xl] + down[x] + down[xr];
      alpha[size_t(y) * W + x] = uint8_t((sum + 4) / 9);
    }
  }
}

}  // namespace

vips::VImage refine_matte(const vips::VImage &rgb_in, const uint8_t *model_rgb, const std::vector<uint8_t> &matte,
                          int mw, int mh, const RefineParams &p) {
  vips::VImage rgb = rgb_in.copy_memory();
  const int W = rgb.width(), H = rgb.height();
  const uint8_t *image = static_cast<const uint8_t *>(rgb.data());
  ColourModels models;
  GuidedCoefficients guided;
  if (p.method == 1) guided = guided_coefficients(model_rgb, matte, mw, mh, p.guided_radius, p.guided_eps);
  else models = colour_models(model_rgb, matte, mw, mh, p);
  std::vector<uint8_t> band = unknown_band(matte, mw, mh, p);
  Taps tx = taps(W, mw), ty = taps(H, mh);

  std::vector<uint8_t> out(size_t(W) * H);
  for (int y = 0; y < H; y++) {
    const int r0 = ty.i0[y] * mw, r1 = ty.i1[y] * mw;
    const float fy = ty.f[y];
    for (int x = 0; x < W; x++) {
      const int c0 = tx.i0[x], c1 = tx.i1[x];
      const float fx = tx.f[x];
      const size_t k[4] = {size_t(r0 + c0), size_t(r0 + c1), size_t(r1 + c0), size_t(r1 + c1)};
      const float w[4] = {(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy};
      float a = (w[0] * matte[k[0]] + w[1] * matte[k[1]] + w[2] * matte[k[2]] + w[3] * matte[k[3]]) * (1.0f / 255);
      if (p.method == 1 && (band[k[0]] | band[k[1]] | band[k[2]] | band[k[3]])) {
        const uint8_t *I = image + (size_t(y) * W + x) * 3;
        float q = 0;
        for (int j = 0; j < 4; j++) {
          const float *aj = &guided.a[k[j] * 3];
          q += w[j] * (aj[0] * I[0] + aj[1] * I[1] + aj[2] * I[2]) * (1.0f / 255) + w[j] * guided.b[k[j]];
        }
        a = std::clamp((q - 0.5f) * p.guided_stretch + 0.5f, 0.0f, 1.0f);
      } else if (band[k[0]] | band[k[1]] | band[k[2]] | band[k[3]]) {
        float sharp = std::clamp((a - 0.5f) * p.stretch + 0.5f, 0.0f, 1.0f);
        // Colour models interpolated with their trust as weight (a model pixel without both
        // colours nearby contributes nothing).
        float trust = 0, F[3] = {0, 0, 0}, B[3] = {0, 0, 0};
        for (int j = 0; j < 4; j++) {
          float t = w[j] * models.trust[k[j]];
          if (t <= 0) continue;
          trust += t;
          for (int c = 0; c < 3; c++) F[c] += t * models.fg[k[j] * 3 + c], B[c] += t * models.bg[k[j] * 3 + c];
        }
        float estimate = sharp;
        if (trust > 0) {
          float norm = 1.0f / trust, dot = 0, len2 = 0;
          const uint8_t *I = image + (size_t(y) * W + x) * 3;
          float f[3], b[3];
          for (int c = 0; c < 3; c++) {
            f[c] = F[c] * norm, b[c] = B[c] * norm;
            dot += (I[c] - b[c]) * (f[c] - b[c]);
            len2 += (f[c] - b[c]) * (f[c] - b[c]);
          }
          if (len2 > 1) {
            float colour = std::clamp(dot / len2, 0.0f, 1.0f);
            // How far the pixel's colour is from the blend colour*F + (1 - colour)*B.
            float residual2 = 0;
            for (int c = 0; c < 3; c++) {
              float d = I[c] - (b[c] + colour * (f[c] - b[c]));
              residual2 += d * d;
            }
            float fits = std::max(0.0f, 1.0f - std::sqrt(residual2) / std::max(1.0f, p.fit));
            float t = trust * fits;
            estimate = t * colour + (1 - t) * sharp;
          }
        }
        a = estimate;
      }
      out[size_t(y) * W + x] = uint8_t(std::lround(std::clamp(a, 0.0f, 1.0f) * 255));
    }
  }
  if (p.smooth) smooth_band(out, W, H, band, tx, ty, mw);
  clean_matte(out.data(), out.size(), p);
  VipsImage *copied = vips_image_new_from_memory_copy(out.data(), out.size(), W, H, 1, VIPS_FORMAT_UCHAR);
  if (!copied) throw vips::VError();
  return vips::VImage(copied);
}

}  // namespace matte
