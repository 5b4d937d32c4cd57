#include "layer_blend.h"

#include <vips/vips.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <vector>

using vips::VImage;

namespace matte {

const LinearTables &linear_tables() {
  static const LinearTables tables = [] {
    LinearTables t;
    for (int v = 0; v < 256; v++) {
      const double c = v / 255.0;
      t.to_linear[v] = uint16_t(std::lround(65535 * (c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4))));
    }
    for (int v = 0; v < 65536; v++) {
      const double l = v / 65535.0;
      t.to_srgb[v] = uint8_t(std::lround(255 * (l <= 0.0031308 ? l * 12.92 : 1.055 * std::pow(l, 1 / 2.4) - 0.055)));
    }
    return t;
  }();
  return tables;
}

namespace {

// libvips' blending ifthenelse of one sample (IBLEND1): v of 255 is `a`, 0 is `b`.
inline int blend(int v, int a, int b) { return (v * a + (255 - v) * b + 128) / 255; }

bool is_rgb8(const VImage &image, int bands) {
  return image.format() == VIPS_FORMAT_UCHAR && image.bands() == bands && image.coding() == VIPS_CODING_NONE;
}

int generate_linear_over(VipsRegion *out, void *seq, void *, void *, gboolean *) {
  auto **in = static_cast<VipsRegion **>(seq);
  const VipsRect &r = out->valid;
  for (int i = 0; in[i]; i++)
    if (vips_region_prepare(in[i], &r)) return -1;
  const LinearTables &t = linear_tables();
  for (int y = r.top; y < r.top + r.height; y++) {
    const uint8_t *s = VIPS_REGION_ADDR(in[0], r.left, y);
    const uint8_t *b = VIPS_REGION_ADDR(in[1], r.left, y);
    const uint8_t *h = in[2] ? VIPS_REGION_ADDR(in[2], r.left, y) : nullptr;
    uint8_t *q = VIPS_REGION_ADDR(out, r.left, y);
    for (int x = 0; x < r.width; x++, s += 4, b += 3, q += 3) {
      uint8_t floor[3] = {b[0], b[1], b[2]};
      if (h) {
        if (const int a = h[3]) for (int c = 0; c < 3; c++) floor[c] = uint8_t(blend(a, h[c], floor[c]));
        h += 4;
      }
      const int a = s[3];
      for (int c = 0; c < 3; c++) q[c] = t.to_srgb[blend(a, t.to_linear[s[c]], t.to_linear[floor[c]])];
    }
  }
  return 0;
}

// composite2's OVER of one pixel in its vector path (vips_combine_pixels3): each value scaled to
// 0..1 by a float division, premultiplied, blended, unpremultiplied, scaled back and truncated.
void over_pixel(const uint8_t *h, const uint8_t *s, uint8_t *q) {
  constexpr float k = 255;
  float B[4] = {h[0] / k, h[1] / k, h[2] / k, h[3] / k};
  const float aB = B[3];
  for (float &v : B) v *= aB;
  B[3] = aB;
  float A[4] = {s[0] / k, s[1] / k, s[2] / k, s[3] / k};
  const float aA = A[3];
  for (float &v : A) v *= aA;
  const float aR = aA + aB * (1 - aA);
  const float t1 = 1 - aA;
  for (int i = 0; i < 4; i++) B[i] = A[i] + t1 * B[i];
  B[3] = aR;
  if (aR == 0) {
    B[0] = B[1] = B[2] = 0;
  } else {
    for (float &v : B) v /= aR;
    B[3] = aR;
  }
  for (int i = 0; i < 4; i++) q[i] = uint8_t(std::clamp(B[i] * k, 0.0f, k));
}

// What over_pixel gives where the image is opaque (the value scaled down and back, truncated: not
// always the value) and where it is transparent over the under layer (by its value and alpha).
struct OverTables {
  uint8_t opaque[256];
  uint8_t under[256][256][2];  // [alpha][value]: the colour, and the alpha
  OverTables() {
    const uint8_t none[4] = {0, 0, 0, 0};
    for (int v = 0; v < 256; v++) {
      const uint8_t s[4] = {uint8_t(v), 0, 0, 255};
      uint8_t q[4];
      over_pixel(none, s, q);
      opaque[v] = q[0];
      for (int a = 0; a < 256; a++) {
        const uint8_t h[4] = {uint8_t(v), 0, 0, uint8_t(a)};
        over_pixel(h, none, q);
        under[a][v][0] = q[0];
        under[a][v][1] = q[3];
      }
    }
  }
};

int generate_srgb_over(VipsRegion *out, void *seq, void *, void *, gboolean *) {
  auto **in = static_cast<VipsRegion **>(seq);
  const VipsRect &r = out->valid;
  for (int i = 0; in[i]; i++)
    if (vips_region_prepare(in[i], &r)) return -1;
  static const OverTables t;
  for (int y = r.top; y < r.top + r.height; y++) {
    const uint8_t *h = VIPS_REGION_ADDR(in[0], r.left, y);
    const uint8_t *s = VIPS_REGION_ADDR(in[1], r.left, y);
    uint8_t *q = VIPS_REGION_ADDR(out, r.left, y);
    for (int x = 0; x < r.width; x++, h += 4, s += 4, q += 4) {
      if (s[3] == 255) {
        q[0] = t.opaque[s[0]], q[1] = t.opaque[s[1]], q[2] = t.opaque[s[2]], q[3] = 255;
      } else if (s[3] == 0) {
        const auto &u = t.under[h[3]];
        q[0] = u[h[0]][0], q[1] = u[h[1]][0], q[2] = u[h[2]][0], q[3] = u[h[0]][1];
      } else {
        over_pixel(h, s, q);
      }
    }
  }
  return 0;
}

// A lazy image of `bands` 8-bit sRGB bands over the inputs (of one size, the first's shape),
// computed by `generate` from their regions.
VImage blended(std::initializer_list<VipsImage *> images, int bands, VipsGenerateFn generate) {
  std::vector<VipsImage *> inputs;
  for (VipsImage *image : images)
    if (image) inputs.push_back(image);
  inputs.push_back(nullptr);
  VipsImage *out = vips_image_new();
  VImage result(out);  // owns it from here, on an error too
  if (vips_image_pipeline_array(out, VIPS_DEMAND_STYLE_THINSTRIP, inputs.data())) throw vips::VError();
  out->Bands = bands;
  out->Type = VIPS_INTERPRETATION_sRGB;
  // The inputs live as long as the output (unreferenced when it closes), and so does their array.
  const size_t count = inputs.size() - 1;
  auto **held = static_cast<VipsImage **>(vips_malloc(VIPS_OBJECT(out), sizeof(VipsImage *) * (count + 1)));
  if (!held) throw vips::VError();
  for (size_t i = 0; i <= count; i++) {
    held[i] = inputs[i];
    if (inputs[i]) {
      g_object_ref(inputs[i]);
      vips_object_local(out, inputs[i]);
    }
  }
  if (vips_image_generate(out, vips_start_many, generate, vips_stop_many, held, nullptr)) throw vips::VError();
  return result;
}

}  // namespace

bool linear_over_takes(const VImage &subject, const VImage &background, const VImage *shadow) {
  const auto same_size = [&](const VImage &image) { return image.width() == subject.width() && image.height() == subject.height(); };
  return is_rgb8(subject, 4) && is_rgb8(background, 3) && same_size(background) &&
         (!shadow || (is_rgb8(*shadow, 4) && same_size(*shadow)));
}

VImage linear_over(const VImage &subject, const VImage &background, const VImage *shadow) {
  return blended({subject.get_image(), background.get_image(), shadow ? shadow->get_image() : nullptr}, 3,
                 generate_linear_over);
}

bool srgb_over_takes(const VImage &under, const VImage &image) {
  return is_rgb8(under, 4) && is_rgb8(image, 4) && under.width() == image.width() && under.height() == image.height() &&
         under.interpretation() == VIPS_INTERPRETATION_sRGB && image.interpretation() == VIPS_INTERPRETATION_sRGB;
}

VImage srgb_over(const VImage &under, const VImage &image) {
  return blended({under.get_image(), image.get_image(), nullptr}, 4, generate_srgb_over);
}

}  // namespace matte
