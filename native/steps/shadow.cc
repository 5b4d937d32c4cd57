// shadow: a shadow cast by the image's alpha, drawn under it, as one blurred plane (no second
// inference). A drop shadow is the silhouette offset and blurred; a contact shadow is the
// subject's base flattened into a thin band under it and blurred (the shadow product and car
// photos sit on). The canvas grows where a drop shadow would be clipped, with transparent pixels.
#include "../errors.h"
#include "steps.h"
#include "subject_box.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using vips::VImage;

namespace matte {

namespace {

// The defaults, as shares of the subject's box, so that a thumbnail and a 12 MP photo get the same
// look: a drop shadow's blur radius and offset (down and to the right), of its longer side; the
// contact shadow's base (the lowest rows of the box) and the band it is flattened to.
constexpr double kDropBlur = 0.05;
constexpr double kDropOffsetX = 0.02;
constexpr double kDropOffsetY = 0.03;
constexpr double kContactBase = 0.04;    // of the box's height
constexpr double kContactHeight = 0.05;  // of the box's width; the default blur radius is this band's height

// How far a Gaussian's tail is drawn, in sigmas: past 3 a shadow's edge is below half a level.
constexpr double kReach = 3;

struct Geometry {
  Box silhouette;   // where the shadow's shape lies before the blur, in the input frame's pixels
  double sigma;
  int grow_left, grow_top, grow_right, grow_bottom;
  int base_rows;    // contact: the rows of the box's bottom that make the base
};

Geometry geometry(const Box &box, const Step &step, int width, int height) {
  const double longer = std::max(box.width, box.height);
  Geometry g{};
  double radius;
  int dx, dy;
  if (step.contact) {
    const int band = std::max(2, int(std::lround(kContactHeight * box.width)));
    g.base_rows = std::clamp(int(std::lround(kContactBase * box.height)), 1, box.height);
    radius = step.blur >= 0 ? step.blur : band;
    dx = step.has_offset ? int(std::lround(step.offset_x)) : 0;
    dy = step.has_offset ? int(std::lround(step.offset_y)) : 0;
    // Centred on the base's bottom edge: half of it behind the subject, half below.
    g.silhouette = {box.left + dx, box.bottom() - band / 2 + dy, box.width, band};
  } else {
    radius = step.blur >= 0 ? step.blur : std::max(1.0, std::round(kDropBlur * longer));
    dx = int(std::lround(step.has_offset ? step.offset_x : kDropOffsetX * longer));
    dy = int(std::lround(step.has_offset ? step.offset_y : kDropOffsetY * longer));
    g.silhouette = shifted(box, dx, dy);
  }
  g.sigma = radius / 2;
  const int reach = int(std::ceil(kReach * g.sigma));
  g.grow_left = std::max(0, reach - g.silhouette.left);
  g.grow_top = std::max(0, reach - g.silhouette.top);
  g.grow_right = std::max(0, g.silhouette.right() + reach - width);
  g.grow_bottom = std::max(0, g.silhouette.bottom() + reach - height);
  return g;
}

// A Gaussian blur of a plane, at a reduced scale where sigma is large (the plane is smooth, so a
// box shrink, a blur of sigma / k and a bilinear enlargement give the same shadow at a fraction of
// the cost of a full-size blur).
VImage blurred(const VImage &plane, double sigma) {
  if (sigma <= 0) return plane;
  const int k = std::clamp(int(sigma / 2), 1, 64);
  if (k == 1) return plane.gaussblur(sigma, VImage::option()->set("min_ampl", 0.005)).cast(VIPS_FORMAT_UCHAR);
  VImage small = plane.shrink(k, k).gaussblur(sigma / k, VImage::option()->set("min_ampl", 0.005));
  // Back to full size, bilinear, each small pixel at the centre of the k x k block it averaged.
  const double centre = (k - 1) / 2.0;
  VImage out = small.affine({double(k), 0, 0, double(k)},
                            VImage::option()
                                ->set("interpolate", vips::VInterpolate::new_from_name("bilinear"))
                                ->set("odx", centre)
                                ->set("ody", centre)
                                ->set("oarea", std::vector<int>{0, 0, plane.width(), plane.height()})
                                ->set("extend", VIPS_EXTEND_COPY));
  return out.cast(VIPS_FORMAT_UCHAR);
}

VImage with_alpha(const VImage &image) {
  if (image.has_alpha()) return image;
  return image.bandjoin_const({255}).copy(VImage::option()->set("interpretation", VIPS_INTERPRETATION_sRGB));
}

VImage cast_shadow(const VImage &in, const Box &box, const Geometry &g, const Step &step) {
  const VImage image = with_alpha(in);
  const int width = image.width() + g.grow_left + g.grow_right;
  const int height = image.height() + g.grow_top + g.grow_bottom;
  const VImage alpha = image.extract_band(image.bands() - 1);
  // A VOption is consumed by the call it is given to: a new one each time.
  const auto transparent = [] { return VImage::option()->set("extend", VIPS_EXTEND_BLACK); };
  // The silhouette on the new canvas, then blurred: the shadow's shape.
  VImage shape;
  if (step.contact) {
    VImage base = alpha.crop(box.left, box.bottom() - g.base_rows, box.width, g.base_rows);
    shape = resize_exact(base, g.silhouette.width, g.silhouette.height)
                .embed(g.grow_left + g.silhouette.left, g.grow_top + g.silhouette.top, width, height, transparent());
  } else {
    shape = alpha.embed(g.grow_left + g.silhouette.left - box.left, g.grow_top + g.silhouette.top - box.top, width,
                        height, transparent());
  }
  const double strength = step.opacity * step.rgba[3] / 255;
  VImage shadow_alpha = (blurred(shape, g.sigma) * strength).cast(VIPS_FORMAT_UCHAR);
  VImage shadow = shadow_alpha.new_from_image(std::vector<double>{step.rgba[0], step.rgba[1], step.rgba[2]})
                      .bandjoin(shadow_alpha)
                      .copy(VImage::option()->set("interpretation", VIPS_INTERPRETATION_sRGB));
  VImage subject = g.grow_left || g.grow_top || g.grow_right || g.grow_bottom
                       ? image.embed(g.grow_left, g.grow_top, width, height, transparent())
                       : image;
  return shadow.composite2(subject, VIPS_BLEND_MODE_OVER).cast(VIPS_FORMAT_UCHAR);
}

}  // namespace

void read_shadow(const PlanFields &fields, Step &step) {
  std::string type = fields.text("type");
  if (type != "drop" && type != "contact") throw Error("internal", "plan: unknown shadow type " + type);
  step.contact = type == "contact";
  step.opacity = fields.number("opacity", 0, 1, 0.5);
  step.blur = fields.has("blur") ? fields.number("blur", 0, kMaxShadowBlur, 0) : -1;
  step.has_offset = fields.has("offsetX") || fields.has("offsetY");
  step.offset_x = fields.number("offsetX", -kMaxShadowOffset, kMaxShadowOffset, 0);
  step.offset_y = fields.number("offsetY", -kMaxShadowOffset, kMaxShadowOffset, 0);
  std::vector<double> rgba = fields.numbers("rgba", 4);
  for (size_t i = 0; i < 4; i++) step.rgba[i] = std::clamp(rgba[i], 0.0, 255.0);
}

void run_shadow(Frames &frames, const Step &step, const StepContext &context) {
  // One box for every frame, so that the frames keep one size.
  std::optional<Box> box = subject_box(frames);
  if (!box || step.opacity <= 0 || step.rgba[3] <= 0) return;
  const Geometry g = geometry(*box, step, frames.width(), frames.height());
  const double width = double(frames.width()) + g.grow_left + g.grow_right;
  const double height = double(frames.height()) + g.grow_top + g.grow_bottom;
  if (width * height * frames.count() > double(context.plan.limits.max_pixels) || width > VIPS_MAX_COORD ||
      height > VIPS_MAX_COORD)
    throw image_too_large("the shadow would grow the canvas to " + size_text(int64_t(width), int64_t(height)) +
                          ", more than the limit of " + std::to_string(context.plan.limits.max_pixels) + " pixels");
  frames.apply([&](const VImage &image) { return cast_shadow(image, *box, g, step); });
  frames.move_subject([&](const Box &subject) { return shifted(subject, g.grow_left, g.grow_top); });
}

}  // namespace matte
