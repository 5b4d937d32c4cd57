#include "linear_over.h"

#include <vips/vips.h>

#include <cmath>
#include <cstdint>

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

int generate(VipsRegion *out, void *seq, void *, void *, gboolean *) {
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

}  // namespace

bool linear_over_takes(const VImage &subject, const VImage &background, const VImage *shadow) {
  const auto same_size = [&](const VImage &image) { return image.width() == subject.width() && image.height() == subject.height(); };
  return is_rgb8(subject, 4) && is_rgb8(background, 3) && same_size(background) &&
         (!shadow || (is_rgb8(*shadow, 4) && same_size(*shadow)));
}

VImage linear_over(const VImage &subject, const VImage &background, const VImage *shadow) {
  VipsImage *inputs[] = {subject.get_image(), background.get_image(), shadow ? shadow->get_image() : nullptr, nullptr};
  VipsImage *out = vips_image_new();
  VImage result(out);  // owns it from here, on an error too
  if (vips_image_pipeline_array(out, VIPS_DEMAND_STYLE_THINSTRIP, inputs)) throw vips::VError();
  out->Bands = 3;
  out->Type = VIPS_INTERPRETATION_sRGB;
  // The inputs live as long as the output (unreferenced when it closes).
  for (int i = 0; inputs[i]; i++) {
    g_object_ref(inputs[i]);
    vips_object_local(out, inputs[i]);
  }
  VipsImage **held = vips_allocate_input_array(out, inputs[0], inputs[1], inputs[2], nullptr);
  if (!held || vips_image_generate(out, vips_start_many, generate, vips_stop_many, held, nullptr)) throw vips::VError();
  return result;
}

}  // namespace matte
