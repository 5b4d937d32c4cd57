// How the refinement works (bench/quality scores every choice: bench/README.md,
// "Background-removal quality"):
//
// 1. At the model's resolution, where both the image and the model's matte are known, the
//    colour-guided filter (He et al.; guided_filter.h) fits alpha ~ a . I + b over small windows:
//    for each model pixel, how the matte varies with the colour around it.
// 2. The unknown band: model pixels whose value is unsure, or that touch the other side of 0.5,
//    dilated by one model pixel. Only full-resolution pixels that this band covers are refined; the
//    rest keep the (linearly upscaled) model value, so the cost follows the subject's outline, not
//    the image's area.
// 3. In the band, the coefficients a, b are interpolated to full resolution and applied to the
//    full-resolution colour (the "fast guided filter": fitted coarse, applied fine), so the matte's
//    edges follow the image's own edges at the output resolution instead of the blur of an
//    upscaled 320x320 or 1024x1024 matte; the result is sharpened around 0.5 (the ground truth's
//    edges are mostly hard; the fitted slope is softened by the ridge and by the model's blur).
// 4. In the thin transition that is left, alpha is solved from the pixel's colour and its sure
//    foreground and background neighbours (edge_colour.h): partial alpha of anti-aliased edges.
// 5. Cleanup: values within `floor` of 0 become 0, within 255 - `ceiling` of 255 become 255.
// Steps 3 to 5 run at full resolution in bands of rows on the job's threads (refine_bands.h), as
// do the window means of step 1, one plane a band; every band writes only its own rows (planes),
// so the matte is the same whatever the thread count.
#include "refine.h"

#include "../errors.h"
#include "../huge_pages.h"
#include "floats4.h"
#include "guided_filter.h"
#include "refine_bands.h"
#include "taps.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace matte {

void clean_matte(uint8_t *alpha, size_t count, const RefineParams &params) {
  auto clean = [&](uint8_t &v) {
    if (v <= params.floor) v = 0;
    else if (v >= params.ceiling) v = 255;
  };
  // Most of a matte is 0 or 255 already, which the cleanup leaves as they are (255 unless the
  // floor is 255): 8 of those are passed over at once.
  const uint64_t opaque = params.floor < 255 ? ~uint64_t(0) : 0;
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    uint64_t word;
    std::memcpy(&word, alpha + i, 8);
    if (word == 0 || word == opaque) continue;
    for (size_t k = i; k < i + 8; k++) clean(alpha[k]);
  }
  for (; i < count; i++) clean(alpha[i]);
}

namespace {

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

}  // namespace

vips::VImage refine_matte(const vips::VImage &rgb_in, const uint8_t *model_rgb, const std::vector<uint8_t> &matte,
                          int mw, int mh, const RefineParams &p, Budget *budget) {
  vips::VImage rgb = copy_to_memory(rgb_in);  // huge_pages.h: a large buffer, written once
  const int W = rgb.width(), H = rgb.height();
  const uint8_t *image = static_cast<const uint8_t *>(rgb.data());
  std::vector<uint8_t> band = unknown_band(matte, mw, mh, p);
  Taps tx = taps(W, mw), ty = taps(H, mh);
  const double upscale = std::sqrt(double(W) * H / (double(mw) * mh));
  const float stretch = p.stretch + p.stretch_per_upscale * float(std::max(0.0, upscale - 1));
  GuidedCoefficients guided = guided_coefficients(model_rgb, matte, mw, mh, p.radius, p.eps, budget);

  // The columns in runs that share their two model columns (tx.i0, tx.i1): along a run, the four
  // model pixels around a pixel are the same, so a run away from the band whose four are equal
  // (most of an image) is filled at once.
  std::vector<int> column_runs;
  for (int x = 0; x < W; x++)
    if (x == 0 || tx.i0[x] != tx.i0[x - 1]) column_runs.push_back(x);
  column_runs.push_back(W);

  // The refined matte is written straight into the image returned (huge_pages.h: a large buffer,
  // written once); the bands below write every pixel of it.
  vips::VImage alpha = new_memory_image(W, H, 1, VIPS_FORMAT_UCHAR);
  uint8_t *out = VIPS_IMAGE_ADDR(alpha.get_image(), 0, 0);
  for_row_bands(H, [&](int first_row, int end_row) {
  for (int y = first_row; y < end_row; y++) {
    const int r0 = ty.i0[y] * mw, r1 = ty.i1[y] * mw;
    const float fy = ty.f[y];
    uint8_t *row = &out[size_t(y) * W];
    for (size_t run = 0; run + 1 < column_runs.size(); run++) {
      const int x_begin = column_runs[run], x_end = column_runs[run + 1];
      const int c0 = tx.i0[x_begin], c1 = tx.i1[x_begin];
      const size_t k[4] = {size_t(r0 + c0), size_t(r0 + c1), size_t(r1 + c0), size_t(r1 + c1)};
      const bool in_band = band[k[0]] | band[k[1]] | band[k[2]] | band[k[3]];
      // Most of an image is sure background or subject away from the band: no arithmetic there.
      const uint8_t m0 = matte[k[0]];
      if (!in_band && m0 == matte[k[1]] && m0 == matte[k[2]] && m0 == matte[k[3]]) {
        std::memset(row + x_begin, m0, size_t(x_end - x_begin));
        continue;
      }
      const float *a[4] = {&guided.a[k[0] * 3], &guided.a[k[1] * 3], &guided.a[k[2] * 3], &guided.a[k[3] * 3]};
      const float b[4] = {guided.b[k[0]], guided.b[k[1]], guided.b[k[2]], guided.b[k[3]]};
      const float m[4] = {float(matte[k[0]]), float(matte[k[1]]), float(matte[k[2]]), float(matte[k[3]])};
      // Four pixels at once, then one at a time: the same arithmetic (floats4.h).
      int x = x_begin;
      for (; x + 4 <= x_end; x += 4) {
        const Floats4 fx = load4(&tx.f[x]), one = splat4(1), fy4 = splat4(fy);
        const Floats4 w[4] = {(one - fx) * (one - fy4), fx * (one - fy4), (one - fx) * fy4, fx * fy4};
        Floats4 v;
        if (in_band) {
          // alpha = a . I + b with a, b interpolated from the model's resolution.
          const uint8_t *I = image + (size_t(y) * W + x) * 3;
          const Floats4 I0 = {float(I[0]), float(I[3]), float(I[6]), float(I[9])};
          const Floats4 I1 = {float(I[1]), float(I[4]), float(I[7]), float(I[10])};
          const Floats4 I2 = {float(I[2]), float(I[5]), float(I[8]), float(I[11])};
          Floats4 q = splat4(0);
          for (int j = 0; j < 4; j++)
            q += w[j] * ((splat4(a[j][0]) * I0 + splat4(a[j][1]) * I1 + splat4(a[j][2]) * I2) * splat4(1.0f / 255) +
                         splat4(b[j]));
          v = (q - splat4(0.5f)) * splat4(stretch) + splat4(0.5f);
        } else {
          v = (w[0] * splat4(m[0]) + w[1] * splat4(m[1]) + w[2] * splat4(m[2]) + w[3] * splat4(m[3])) *
              splat4(1.0f / 255);
        }
        v = v < splat4(0) ? splat4(0) : v;  // std::clamp(v, 0, 1)
        v = splat4(1) < v ? splat4(1) : v;
        const Ints4 bytes = round_bytes4(v * splat4(255));
        for (int l = 0; l < 4; l++) row[x + l] = uint8_t(bytes[l]);
      }
      for (; x < x_end; x++) {
        const float fx = tx.f[x];
        const float w[4] = {(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy};
        float v;
        if (in_band) {
          const uint8_t *I = image + (size_t(y) * W + x) * 3;
          float q = 0;
          for (int j = 0; j < 4; j++)
            q += w[j] * ((a[j][0] * I[0] + a[j][1] * I[1] + a[j][2] * I[2]) * (1.0f / 255) + b[j]);
          v = (q - 0.5f) * stretch + 0.5f;
        } else {
          v = (w[0] * m[0] + w[1] * m[1] + w[2] * m[2] + w[3] * m[3]) * (1.0f / 255);
        }
        row[x] = round_byte(std::clamp(v, 0.0f, 1.0f) * 255);
      }
    }
  }
  }, budget);
  resolve_edge_colours(out, image, W, H, p.edge, budget);
  for_row_bands(H, [&](int first_row, int end_row) {
    clean_matte(&out[size_t(first_row) * W], size_t(end_row - first_row) * W, p);
  }, budget);
  return alpha;
}

}  // namespace matte
