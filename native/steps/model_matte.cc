// The model's matte of an image, as removeBackground and resize's subject gravity make it.
#include "model_matte.h"

#include "../budget.h"
#include "../errors.h"

#include <algorithm>
#include <array>

using vips::VImage;

namespace matte {

// Resizes to exactly width x height (the model's input ignores the aspect ratio).
VImage stretch(const VImage &in, int width, int height, VipsKernel kernel) {
  VImage out = in.resize(double(width) / in.width(),
                         VImage::option()->set("vscale", double(height) / in.height())->set("kernel", kernel));
  if (out.width() != width || out.height() != height)
    out = out.embed(0, 0, width, height, VImage::option()->set("extend", VIPS_EXTEND_COPY))
              .crop(0, 0, width, height);
  return out;
}

// Interleaved 8-bit RGB -> planar float into `chw` (the model's input tensor), normalised as the
// registry says, in one pass.
static void to_planar(const VImage &rgb, const ModelSpec &spec, float *chw) {
  const size_t pixels = size_t(rgb.width()) * rgb.height();
  const uint8_t *data = static_cast<const uint8_t *>(rgb.data());
  double divide = spec.divide;
  if (divide <= 0) divide = std::max<double>(1, *std::max_element(data, data + pixels * 3));
  std::array<float, 3> scale, offset;
  for (int c = 0; c < 3; c++) {
    scale[c] = float(1.0 / (divide * spec.std[c]));
    offset[c] = float(-spec.mean[c] / spec.std[c]);
  }
  for (size_t i = 0; i < pixels; i++)
    for (int c = 0; c < 3; c++) chw[c * pixels + i] = data[i * 3 + c] * scale[c] + offset[c];
}

// The model's matte of `small` (model-sized RGB); with test-time augmentation, the mean of the
// mattes of the image and of its mirror image.
std::vector<uint8_t> model_matte(const VImage &small, const Model &model, bool tta, Budget &budget) {
  const ModelSpec &spec = model.spec();
  std::vector<uint8_t> matte = model.infer([&](float *chw) { to_planar(small, spec, chw); }, &budget);
  if (!tta) return matte;
  budget.check();
  const VImage mirror = small.fliphor().copy_memory();
  std::vector<uint8_t> mirrored = model.infer([&](float *chw) { to_planar(mirror, spec, chw); }, &budget);
  const int w = spec.input_width;
  for (int y = 0; y < spec.input_height; y++)
    for (int x = 0; x < w; x++) {
      size_t i = size_t(y) * w + x, j = size_t(y) * w + (w - 1 - x);
      matte[i] = uint8_t((matte[i] + mirrored[j] + 1) / 2);
    }
  return matte;
}

// The 3-band 8-bit image the model and the cut-out are made from.
VImage colour_of(const VImage &image) {
  VImage rgb = image;
  if (rgb.has_alpha()) rgb = rgb.extract_band(0, VImage::option()->set("n", rgb.bands() - 1));
  // The loader gives 8-bit sRGB; this keeps to_planar's 3-bytes-a-pixel reading safe whatever a
  // step before gave.
  if (rgb.bands() != 3) rgb = rgb.colourspace(VIPS_INTERPRETATION_sRGB);
  if (rgb.format() != VIPS_FORMAT_UCHAR) rgb = rgb.cast(VIPS_FORMAT_UCHAR);
  if (rgb.bands() != 3) throw Error("internal", "the model needs a 3-band colour image");
  return rgb;
}

// The model-size image the model reads, stretched from `rgb` (any size).
VImage model_sized(const VImage &rgb, const ModelSpec &spec) {
  return stretch(rgb, spec.input_width, spec.input_height, VIPS_KERNEL_LANCZOS3).copy_memory();
}

}  // namespace matte
