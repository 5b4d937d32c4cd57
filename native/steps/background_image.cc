// backgroundImage: the image so far OVER the request's background image, which is covered and
// centred on the canvas (remove.bg's rule: scaled to cover, the centre kept, unless it already
// has the canvas's size). The background image is a second input: sniffed, limited and checked
// for its declared size by the same loader (load.cc), decoded with shrink-on-load to the canvas.
#include "../budget.h"
#include "../errors.h"
#include "../load.h"
#include "../layer_blend.h"
#include "steps.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

using vips::VImage;

namespace matte {

// The error paths name the library's option; the server names its form field.
static const char *kPath = "backgroundImage";

static Error about_background(const Error &err) {
  return Error(err.code, err.what(), err.path.empty() ? kPath : err.path);
}

// The background image, loaded for a width x height canvas: its limits and declared size are checked
// from its header first; the decoder shrinks it on load as far as covering the canvas allows.
static Frames load_background(const Plan &plan, const Step &cover, bool sequential, bool header_only = false) {
  LoadOptions options;
  options.header_only = header_only;
  options.limits = plan.limits;
  options.first_step = &cover;
  options.role = "background image";
  options.sequential = sequential;
  try {
    return load(plan.background, plan.background_size, options);
  } catch (const Error &err) {
    throw about_background(err);
  }
}

void check_background_image(const Plan &plan) {
  if (!plan.background) return;
  Step none;
  none.op = Op::BackgroundImage;
  load_background(plan, none, false, true);
}

// Linear light, as 16-bit values (layer_blend.h's tables) for libvips' maplut.
struct LinearLuts {
  VImage to_linear, to_srgb;
};

static LinearLuts linear_luts() {
  const LinearTables &t = linear_tables();
  const auto image = [](const void *data, size_t bytes, int width, VipsBandFormat format) {
    VipsImage *copy = vips_image_new_from_memory_copy(data, bytes, width, 1, 1, format);
    if (!copy) throw vips::VError();
    return VImage(copy);
  };
  return {image(t.to_linear, sizeof t.to_linear, 256, VIPS_FORMAT_USHORT), image(t.to_srgb, sizeof t.to_srgb, 65536, VIPS_FORMAT_UCHAR)};
}

// `in` over `under` (the same size), blended in linear light: a reference rendered as light mixes
// at an edge was matched better than by an sRGB blend (bench/README.md, "Staged cut-outs").
static VImage over(const VImage &in, const VImage &under, const LinearLuts &luts) {
  const auto srgb = [] { return VImage::option()->set("interpretation", VIPS_INTERPRETATION_sRGB); };
  if (under.has_alpha())
    return under.composite2(in, VIPS_BLEND_MODE_OVER, VImage::option()->set("compositing_space", VIPS_INTERPRETATION_scRGB))
        .colourspace(VIPS_INTERPRETATION_sRGB)
        .cast(VIPS_FORMAT_UCHAR)
        .copy(srgb());
  const VImage colour = in.extract_band(0, VImage::option()->set("n", in.bands() - 1));
  const VImage alpha = in.extract_band(in.bands() - 1);
  // (alpha x colour + (255 - alpha) x under) / 255 on the 16-bit linear values, rounded.
  return alpha.ifthenelse(colour.maplut(luts.to_linear), under.maplut(luts.to_linear), VImage::option()->set("blend", true))
      .maplut(luts.to_srgb)
      .copy(srgb());
}

// A shadow's layer (its colour, its alpha) over the background, in sRGB: on an opaque background one
// blending ifthenelse (five times faster than libvips' general composite on 12 MP), else composited.
static VImage shadowed(const VImage &background, const VImage &shadow) {
  const auto srgb = [] { return VImage::option()->set("interpretation", VIPS_INTERPRETATION_sRGB); };
  if (background.has_alpha())
    return background.composite2(shadow, VIPS_BLEND_MODE_OVER).cast(VIPS_FORMAT_UCHAR).copy(srgb());
  const VImage colour = shadow.extract_band(0, VImage::option()->set("n", 3));
  return shadow.extract_band(3).ifthenelse(colour, background, VImage::option()->set("blend", true)).copy(srgb());
}

void run_background_image(Frames &frames, const Step &step, const StepContext &context) {
  const Plan &plan = context.plan;
  if (!plan.background)
    throw invalid_operation(step.index, "backgroundImage",
                            "needs a background image (the backgroundImage option, or the background_image field)");
  if (!frames.has_alpha() && frames.under.empty()) return;  // opaque: nothing of the background would show
  Step cover;
  cover.op = Op::Resize;
  cover.index = step.index;
  cover.width = frames.width();
  cover.height = frames.height();
  cover.fit = Fit::Cover;
  Frames background = load_background(plan, cover, frames.count() == 1);
  context.budget.watch(background);
  const ResizeGeometry g = resize_geometry(background.logical_width, background.logical_height, cover);
  if (double(g.scaled_width) * double(g.scaled_height) > double(plan.limits.max_pixels) ||
      g.scaled_width > VIPS_MAX_COORD || g.scaled_height > VIPS_MAX_COORD)
    throw Error("image_too_large",
                "the background image (" + size_text(background.logical_width, background.logical_height) +
                    ") would have to be scaled to " + size_text(g.scaled_width, g.scaled_height) + " to cover the " +
                    size_text(cover.width, cover.height) + " canvas, more than the limit of " +
                    std::to_string(plan.limits.max_pixels) + " pixels",
                kPath);
  if (g.width != background.width() || g.height != background.height() || g.scaled_width != g.width ||
      g.scaled_height != g.height)
    resize_frames(background, g, cover);
  VImage under = background.images.front();
  // Every frame of an animation goes over the same background: computed once.
  if (frames.count() > 1) {
    materialise(background, context.budget);
    under = background.images.front();
  }
  // A shadow under the frames goes onto the background first, in sRGB: its opacity means what it
  // means in every design tool and browser; the subject's edge then in linear light. 8-bit RGB(A)
  // layers, the usual case, are blended in one pass (../layer_blend.h), the rest by libvips.
  const std::vector<VImage> shadows = std::move(frames.under);
  frames.under.clear();
  std::optional<LinearLuts> luts;
  size_t i = 0;
  frames.apply([&](const VImage &image) {
    const VImage *shadow = i < shadows.size() ? &shadows[i] : nullptr;
    i++;
    if (!image.has_alpha()) return image;
    if (linear_over_takes(image, under, shadow)) return linear_over(image, under, shadow);
    if (!luts) luts = linear_luts();
    return over(image, shadow ? shadowed(under, *shadow) : under, *luts);
  });
}

}  // namespace matte
