// trim: finds the box inside a uniform border. The border colour is the top-left pixel's; for an
// image whose top-left pixel is fully transparent the border is transparency. Threshold 10/255.
// Also the remove-background endpoint's crop to the bounding box of alpha > 0 (with its margin,
// past the image's edge with transparent pixels) and its mask (the alpha band alone), and the
// remove.bg route's colour bands alone (its zip's colour image).
#include "../errors.h"
#include "steps.h"
#include "subject_box.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

using vips::VImage;

namespace matte {

static const double kThreshold = 10;

static std::optional<Box> box_or_nothing(int left, int top, int width, int height) {
  if (width <= 0 || height <= 0) return std::nullopt;
  return Box{left, top, width, height};
}

// The box inside a uniform border (trim), or nothing when the image is uniform.
static std::optional<Box> find_trim_box(const VImage &in) {
  // find_trim runs a 3x3 median first and fails ("rank: window too large") on an image narrower or
  // shorter than 3 pixels, which a resize can make: such an image is left as it is.
  if (in.width() < 3 || in.height() < 3) return std::nullopt;
  std::vector<double> corner = in.getpoint(0, 0);
  int top = 0, width = 0, height = 0, left = 0;
  if (in.has_alpha() && corner.back() == 0) {
    VImage alpha = in.extract_band(in.bands() - 1);
    left = alpha.find_trim(&top, &width, &height,
                           VImage::option()->set("threshold", kThreshold)->set("background", std::vector<double>{0}));
  } else {
    // find_trim flattens alpha onto the background it is given; the corner colour is that.
    std::vector<double> colour(corner.begin(), corner.begin() + 3);
    left = in.find_trim(&top, &width, &height,
                        VImage::option()->set("threshold", kThreshold)->set("background", colour));
  }
  return box_or_nothing(left, top, width, height);
}

// The bounding box of pixels with alpha > 0, or nothing when there is no alpha band.
static std::optional<Box> find_opaque_box(const VImage &in) {
  if (!in.has_alpha()) return std::nullopt;
  std::optional<Box> box = subject_box(in);
  return box ? *box : Box{0, 0, 1, 1};  // nothing opaque: a single transparent pixel
}

// `box` grown by `margin` pixels a side, or (percent) by margin % of its width left and right, of
// its height above and below.
static Box with_margin(const Box &box, double margin, bool percent) {
  const int x = int(std::lround(percent ? box.width * margin / 100 : margin));
  const int y = int(std::lround(percent ? box.height * margin / 100 : margin));
  return Box{box.left - x, box.top - y, box.width + 2 * x, box.height + 2 * y};
}

// `box` grown by a margin a side (top, right, bottom, left): pixels plus a % of the box's width
// left and right, of its height above and below.
static Box with_side_margins(const Box &box, const Step &step) {
  const auto side = [&](int i, int length) {
    return int(std::lround(step.margin_pixels_sides[i] + length * step.margin_percent_sides[i] / 100));
  };
  const int top = side(0, box.height), right = side(1, box.width), bottom = side(2, box.height), left = side(3, box.width);
  return Box{box.left - left, box.top - top, box.width + left + right, box.height + top + bottom};
}

// The pixels of `in` in `box`; where the box passes the image's edge, transparent pixels.
static VImage box_of(const VImage &in, const Box &box) {
  if (box.left >= 0 && box.top >= 0 && box.left + box.width <= in.width() && box.top + box.height <= in.height())
    return in.crop(box.left, box.top, box.width, box.height);
  // The colour of the new pixels repeats the edge's (a transparent pixel's colour: docs/api.md,
  // "Capacity and shutdown", cut-out colours); their alpha is 0.
  const int n = in.bands() - 1;
  VImage colour = in.extract_band(0, VImage::option()->set("n", n))
                      .embed(-box.left, -box.top, box.width, box.height, VImage::option()->set("extend", VIPS_EXTEND_COPY));
  VImage alpha = in.extract_band(n).embed(-box.left, -box.top, box.width, box.height,
                                          VImage::option()->set("extend", VIPS_EXTEND_BLACK));
  return colour.bandjoin(alpha).copy(VImage::option()->set("interpretation", in.interpretation()));
}

// The alpha band alone (255 where there is none): a one-band greyscale image.
static VImage extract_alpha(const VImage &in) {
  VImage alpha = in.has_alpha() ? in.extract_band(in.bands() - 1)
                                : VImage::black(in.width(), in.height()).invert().cast(VIPS_FORMAT_UCHAR);
  return alpha.cast(VIPS_FORMAT_UCHAR).copy(VImage::option()->set("interpretation", VIPS_INTERPRETATION_B_W));
}

// Crops every frame to one box: the union of the boxes found per frame, so frames stay equal.
template <typename FindBox>
static void crop_to_union(Frames &frames, FindBox find_box) {
  frames.split();
  std::optional<Box> all;
  for (const VImage &image : frames.images) {
    std::optional<Box> box = find_box(image);
    if (!box) continue;
    if (!all) {
      all = box;
      continue;
    }
    all = united(*all, *box);
  }
  if (!all || (all->left == 0 && all->top == 0 && all->width == frames.width() && all->height == frames.height())) return;
  frames.apply([&](const VImage &image) { return box_of(image, *all); });
  frames.move_subject([&](const Box &subject) { return shifted(subject, -all->left, -all->top); });
}

void run_trim(Frames &frames, const Step &, const StepContext &) { crop_to_union(frames, find_trim_box); }

void read_trim_transparent(const PlanFields &fields, Step &step) {
  if (fields.has("marginSides")) {
    // marginSides: [top, right, bottom, left] pixels; marginPercentSides: the same in % of the box.
    std::vector<double> pixels = fields.numbers("marginSides", 4);
    std::vector<double> percent = fields.numbers("marginPercentSides", 4);
    for (size_t i = 0; i < 4; i++) {
      if (!(pixels[i] >= 0 && pixels[i] <= kMaxTrimMarginPixels && percent[i] >= 0 && percent[i] <= kMaxTrimMarginPercent))
        throw Error("invalid_operations", "trimTransparent margins must be 0.." + std::to_string(int(kMaxTrimMarginPixels)) +
                                              " pixels and 0.." + std::to_string(int(kMaxTrimMarginPercent)) + "%");
      step.margin_pixels_sides[i] = pixels[i];
      step.margin_percent_sides[i] = percent[i];
    }
    step.margin_sides = true;
    return;
  }
  step.margin_percent = fields.has("marginPercent");
  step.margin = step.margin_percent ? fields.number("marginPercent", 0, kMaxTrimMarginPercent, 0)
                                    : fields.number("marginPixels", 0, kMaxTrimMarginPixels, 0);
}

// The remove-background endpoint's trim: the union of the frames' boxes of alpha > 0, grown by the
// step's margin; past the image's edge the canvas grows with transparent pixels (box_of).
void run_trim_transparent(Frames &frames, const Step &step, const StepContext &context) {
  if (step.margin == 0 && !step.margin_sides) return crop_to_union(frames, find_opaque_box);
  const Limits &limits = context.plan.limits;
  crop_to_union(frames, [&](const VImage &image) -> std::optional<Box> {
    std::optional<Box> box = find_opaque_box(image);
    if (!box) return box;
    Box grown = step.margin_sides ? with_side_margins(*box, step) : with_margin(*box, step.margin, step.margin_percent);
    if (double(grown.width) * grown.height * frames.count() > double(limits.max_pixels))
      throw image_too_large("trim_margin would make a " + size_text(grown.width, grown.height) +
                            " image, more than the limit of " + std::to_string(limits.max_pixels) + " pixels");
    return grown;
  });
}

void run_extract_alpha(Frames &frames, const Step &, const StepContext &) {
  frames.apply([&](const VImage &image) { return extract_alpha(image); });
}

// The colour bands alone: the alpha band is dropped, the colours kept as they are (a JPEG encoder
// would flatten them on white), so the colour image and the mask recombine into the cut-out.
void run_extract_colour(Frames &frames, const Step &, const StepContext &) {
  frames.apply_pointwise([&](const VImage &image) {
    return image.has_alpha() ? image.extract_band(0, VImage::option()->set("n", image.bands() - 1)) : image;
  });
}

}  // namespace matte
