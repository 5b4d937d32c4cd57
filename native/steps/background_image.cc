// backgroundImage: the image so far OVER the request's background image, which is covered and
// centred on the canvas (remove.bg's rule: scaled to cover, the centre kept, unless it already
// has the canvas's size). The background image is a second input: sniffed, limited and checked
// for its declared size by the same loader (load.cc), decoded with shrink-on-load to the canvas.
#include "../budget.h"
#include "../errors.h"
#include "../load.h"
#include "steps.h"

#include <string>

using vips::VImage;

namespace matte {

// The error paths name the library's option; the server names its form field.
static const char *kPath = "backgroundImage";

static Error about_background(const Error &err) {
  return Error(err.code, err.what(), err.path.empty() ? kPath : err.path);
}

// The background image, loaded for a width x height canvas: its limits and declared size are checked
// from its header first; the decoder shrinks it on load as far as covering the canvas allows.
static Frames load_background(const Plan &plan, const Step &cover, bool sequential) {
  LoadOptions options;
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
  load_background(plan, none, false);
}

// `in` over `under` (opaque, the same size): alpha blended in sRGB.
static VImage over(const VImage &in, const VImage &under) {
  if (!in.has_alpha()) return in;
  const VImage colour = in.extract_band(0, VImage::option()->set("n", in.bands() - 1));
  const VImage alpha = in.extract_band(in.bands() - 1);
  if (under.has_alpha())
    return under.composite2(in, VIPS_BLEND_MODE_OVER).cast(VIPS_FORMAT_UCHAR).copy(
        VImage::option()->set("interpretation", VIPS_INTERPRETATION_sRGB));
  return alpha.ifthenelse(colour, under, VImage::option()->set("blend", true))
      .copy(VImage::option()->set("interpretation", VIPS_INTERPRETATION_sRGB));
}

void run_background_image(Frames &frames, const Step &step, const StepContext &context) {
  const Plan &plan = context.plan;
  if (!plan.background)
    throw invalid_operation(step.index, "backgroundImage",
                            "needs a background image (the backgroundImage option, or the background_image field)");
  if (!frames.has_alpha()) return;  // opaque: nothing of the background would show
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
    resize_frames(background, g);
  VImage under = background.images.front();
  // Every frame of an animation goes over the same background: computed once.
  if (frames.count() > 1) {
    materialise(background, context.budget);
    under = background.images.front();
  }
  frames.apply([&](const VImage &image) { return over(image, under); });
}

}  // namespace matte
