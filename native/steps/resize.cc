// resize: contain, cover, scale-down and crop, with one or two dimensions (decisions.md 5).
#include "alpha.h"
#include "steps.h"

#include <algorithm>
#include <cmath>

using vips::VImage;

namespace matte {

static int scaled(int size, double scale) { return std::max(1, int(std::lround(size * scale))); }

ResizeGeometry resize_geometry(int width, int height, const Step &step) {
  bool enlarge = step.fit == Fit::Contain || step.fit == Fit::Cover;
  double sx = step.width ? double(step.width) / width : 0;
  double sy = step.height ? double(step.height) / height : 0;

  if (!step.width || !step.height) {
    // One dimension: the other follows the aspect ratio; fit only decides about enlarging.
    double s = step.width ? sx : sy;
    if (!enlarge && s > 1) return {width, height, width, height};
    int w = step.width ? step.width : scaled(width, s);
    int h = step.height ? step.height : scaled(height, s);
    return {w, h, w, h};
  }

  switch (step.fit) {
    case Fit::Contain:
    case Fit::ScaleDown: {
      double s = std::min(sx, sy);
      if (step.fit == Fit::ScaleDown && s >= 1) return {width, height, width, height};
      // The side that decides the scale lands exactly on the requested size.
      int w = sx <= sy ? step.width : std::min(step.width, scaled(width, s));
      int h = sy <= sx ? step.height : std::min(step.height, scaled(height, s));
      return {w, h, w, h};
    }
    case Fit::Cover: {
      double s = std::max(sx, sy);
      int w = sx >= sy ? step.width : std::max(step.width, scaled(width, s));
      int h = sy >= sx ? step.height : std::max(step.height, scaled(height, s));
      return {w, h, step.width, step.height};
    }
    case Fit::Crop: {
      double s = std::min(1.0, std::max(sx, sy));
      int w = s == sx ? step.width : scaled(width, s);
      int h = s == sy ? step.height : scaled(height, s);
      return {w, h, std::min(step.width, w), std::min(step.height, h)};
    }
  }
  return {width, height, width, height};
}

// Scales to exactly width x height: libvips rounds the output size itself, so a one-pixel
// difference is cropped or extended at the edge.
static VImage resize_exact(const VImage &in, int width, int height) {
  if (in.width() == width && in.height() == height) return in;
  VImage out = premultiplied(in, [&](const VImage &image) {
    return image.resize(double(width) / in.width(), VImage::option()
                                                        ->set("vscale", double(height) / in.height())
                                                        ->set("kernel", VIPS_KERNEL_LANCZOS3));
  });
  if (out.width() != width || out.height() != height) {
    if (out.width() >= width && out.height() >= height)
      out = out.crop(0, 0, width, height);
    else
      out = out.embed(0, 0, width, height, VImage::option()->set("extend", VIPS_EXTEND_COPY));
  }
  return out;
}

VImage resize(const VImage &in, const ResizeGeometry &g) {
  VImage out = resize_exact(in, g.scaled_width, g.scaled_height);
  if (g.width == g.scaled_width && g.height == g.scaled_height) return out;
  return out.crop((g.scaled_width - g.width) / 2, (g.scaled_height - g.height) / 2, g.width, g.height);
}

}  // namespace matte
