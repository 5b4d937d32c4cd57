// Helpers shared by the steps that must treat the alpha band apart from the colour bands.
#pragma once

#include <vips/vips8>

#include <array>
#include <functional>
#include <vector>

namespace matte {

/** Applies fn to the colour bands only; alpha, if any, is joined back untouched. */
inline vips::VImage map_colour(const vips::VImage &in, const std::function<vips::VImage(const vips::VImage &)> &fn) {
  if (!in.has_alpha()) return fn(in).cast(VIPS_FORMAT_UCHAR);
  vips::VImage colour = in.extract_band(0, vips::VImage::option()->set("n", in.bands() - 1));
  vips::VImage alpha = in.extract_band(in.bands() - 1);
  return fn(colour).cast(VIPS_FORMAT_UCHAR).bandjoin(alpha);
}

/** The image with an alpha band: an opaque one added when it has none. */
inline vips::VImage with_alpha(const vips::VImage &image) {
  if (image.has_alpha()) return image;
  return image.bandjoin_const({255}).copy(vips::VImage::option()->set("interpretation", VIPS_INTERPRETATION_sRGB));
}

/**
 * `image` at x, y on a width x height canvas of colour `rgba` (0..255 each): pad's box, extend's
 * edges. A colour that is not opaque adds an alpha band (transparent by default: a format without
 * alpha flattens it as any other).
 */
inline vips::VImage embed_in(const vips::VImage &image, int x, int y, int width, int height, const std::array<double, 4> &rgba) {
  vips::VImage out = rgba[3] < 255 ? with_alpha(image) : image;
  std::vector<double> background{rgba[0], rgba[1], rgba[2]};
  if (out.has_alpha()) background.push_back(rgba[3]);
  return out.embed(x, y, width, height, vips::VImage::option()->set("extend", VIPS_EXTEND_BACKGROUND)->set("background", background));
}

/** Runs a spatial filter on premultiplied colour, so transparent pixels do not bleed in as dark fringes. */
inline vips::VImage premultiplied(const vips::VImage &in, const std::function<vips::VImage(const vips::VImage &)> &fn) {
  if (!in.has_alpha()) return fn(in);
  return fn(in.premultiply()).unpremultiply().cast(VIPS_FORMAT_UCHAR);
}

}  // namespace matte
