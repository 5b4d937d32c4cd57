// removeBackground: the model's matte becomes the alpha band, at the full resolution of the image
// at this point of the pipeline. Skipped when the image already has a pixel with alpha < 255.
#include "../budget.h"
#include "../errors.h"
#include "../huge_pages.h"
#include "../matte/foreground.h"
#include "../matte/model.h"
#include "../matte/refine.h"
#include "../matte/second_pass.h"
#include "../matte/upscale.h"
#include "matte_settings.h"
#include "model_matte.h"
#include "steps.h"
#include "subject_box.h"

#include <algorithm>
#include <functional>
#include <future>
#include <optional>
#include <string>

using vips::VImage;

namespace matte {

// A matte handed in (plan.h's MatteHandover) of the image's size, used instead of the model's.
static std::optional<VImage> given_matte(const VImage &rgb, const Step &step) {
  MatteHandover *handover = step.matte;
  if (!handover || handover->frames != 1 || !handover->given) return std::nullopt;
  if (handover->given_width != rgb.width() || handover->given_height != rgb.height()) return std::nullopt;
  handover->used_given = true;
  return VImage::new_from_memory(const_cast<uint8_t *>(handover->given), size_t(rgb.width()) * rgb.height(),
                                 rgb.width(), rgb.height(), 1, VIPS_FORMAT_UCHAR);
}

// The matte this step computed, handed back in memory when asked for (one frame only).
static VImage hand_back(VImage alpha, const Step &step) {
  MatteHandover *handover = step.matte;
  if (!handover || !handover->want) return alpha;
  if (handover->frames != 1 || alpha.bands() != 1 || alpha.format() != VIPS_FORMAT_UCHAR) {
    handover->computed = VImage();
    return alpha;
  }
  alpha = alpha.copy_memory();  // a reference when it already is (the refined matte)
  handover->computed = alpha;
  return alpha;
}

// The matte once made (or handed in): handed back as it is (the cache serves every region and
// edge), then with the step's region and edge.
static VImage finished(const VImage &alpha, const Step &step, const MatteSettings &settings) {
  return apply_matte_settings(hand_back(alpha, step), settings);
}

static VImage with_alpha(const VImage &rgb, const VImage &alpha) {
  return rgb.bandjoin(alpha).copy(VImage::option()->set("interpretation", VIPS_INTERPRETATION_sRGB));
}

// The cut-out of `rgb` with `alpha` (both full size, `image` rgb in memory): with `refine`, the
// colours where it is not opaque estimated from the subject's (matte/foreground.h). A matte handed
// in goes through here too, so a cached matte gives the same cut-out as a computed one.
static VImage with_colours(const VImage &image, const VImage &alpha, const Step &step, Budget &budget) {
  if (!step.refine) return with_alpha(image, alpha);
  const VImage matte = alpha.copy_memory();  // a reference when it already is
  VImage cutout = new_memory_image(image.width(), image.height(), 4, VIPS_FORMAT_UCHAR);
  estimate_foreground(static_cast<const uint8_t *>(image.data()), static_cast<const uint8_t *>(matte.data()),
                      image.width(), image.height(), VIPS_IMAGE_ADDR(cutout.get_image(), 0, 0), ForegroundParams(),
                      &budget);
  return cutout.copy(VImage::option()->set("interpretation", VIPS_INTERPRETATION_sRGB));
}

// With a small subject (matte/second_pass.h), the model's matte of a crop around it, refined at
// the crop's full resolution, replaces `alpha` (the refined whole-frame matte, in memory) there.
static void second_pass(const VImage &image, const std::vector<uint8_t> &matte, const Model &model,
                        const Step &step, Budget &budget, VImage &alpha) {
  const ModelSpec &spec = model.spec();
  second_pass(
      image, matte, spec.input_width, spec.input_height, [&](const VImage &crop) { return model_sized(crop, spec); },
      [&](const VImage &small) { return model_matte(small, model, step.tta, budget); }, SecondPassParams(),
      RefineParams(), &budget, alpha);
}

// The cut-out: `rgb` (full size) with the model's matte of `small` (model size) as its alpha.
static VImage cut_out(const VImage &rgb, const VImage &small, const std::vector<uint8_t> &matte, const Model &model,
                      const Step &step, const MatteSettings &settings, Budget &budget) {
  const ModelSpec &spec = model.spec();
  if (step.refine) {
    // Refined at full resolution, guided by the image (matte/refine.cc).
    const VImage image = copy_to_memory(rgb);
    VImage alpha = refine_matte(image, static_cast<const uint8_t *>(small.data()), matte, spec.input_width,
                                spec.input_height, RefineParams(), &budget);
    budget.check();
    second_pass(image, matte, model, step, budget, alpha);
    budget.check();
    return with_colours(image, finished(alpha, step, settings), step, budget);
  }
  // The model alone, linearly upscaled: parity with the plain onnxruntime pipeline.
  VImage alpha;
  if (rgb.width() >= spec.input_width && rgb.height() >= spec.input_height) {
    alpha = upscale_bilinear(matte.data(), spec.input_width, spec.input_height, rgb.width(), rgb.height());
  } else {
    VipsImage *copied = vips_image_new_from_memory_copy(matte.data(), matte.size(), spec.input_width,
                                                        spec.input_height, 1, VIPS_FORMAT_UCHAR);
    if (!copied) throw vips::VError();
    alpha = stretch(VImage(copied), rgb.width(), rgb.height(), VIPS_KERNEL_LINEAR);
  }
  return with_alpha(rgb, finished(alpha, step, settings));
}

// `in` is read up to three times: run_remove_background hands it over materialised.
static VImage remove_background(const VImage &in, const Model &model, const Step &step, const MatteSettings &settings,
                                Budget &budget) {
  if (in.has_alpha() && in.extract_band(in.bands() - 1).min() < 255) return in;
  VImage rgb = colour_of(in);
  if (std::optional<VImage> given = given_matte(rgb, step))
    return with_colours(step.refine ? copy_to_memory(rgb) : rgb, apply_matte_settings(*given, settings), step, budget);
  VImage small = model_sized(rgb, model.spec());
  budget.check();
  std::vector<uint8_t> matte = model_matte(small, model, step.tta, budget);
  return cut_out(rgb, small, matte, model, step, settings, budget);
}

// The same, with the model's input made from `reduced` (the same image decoded smaller, without
// alpha: matte/model_input.h) while the image itself is still being decoded; `full()` gives it,
// materialised, once the matte is made.
static VImage remove_background(const VImage &reduced, const std::function<VImage()> &full, const Model &model,
                                const Step &step, const MatteSettings &settings, Budget &budget) {
  VImage small = model_sized(colour_of(reduced), model.spec());
  budget.check();
  std::vector<uint8_t> matte = model_matte(small, model, step.tta, budget);
  return cut_out(colour_of(full()), small, matte, model, step, settings, budget);
}

// removeBackground as the first step of a still image, with the model's input from its own smaller
// decode (matte/model_input.h): the full-size image is decoded on another thread meanwhile, so
// the decoder (one thread) runs beside the model instead of before it.
static VImage remove_background_first(Frames &frames, const VImage &reduced, const Model &model, const Step &step,
                                      const MatteSettings &settings, Budget &budget) {
  std::future<void> decoded = std::async(std::launch::async, [&] {
    struct Shutdown {
      ~Shutdown() { vips_thread_shutdown(); }  // this thread's libvips buffers, on an error too
    } shutdown;
    materialise(frames, budget);
  });
  // On an error here, the future's destructor waits for the decode: `frames` outlives it.
  return remove_background(
      reduced,
      [&] {
        decoded.get();  // rethrows the decode's error
        return frames.images.front();
      },
      model, step, settings, budget);
}

void read_remove_background(const PlanFields &fields, Step &step) {
  step.refine = fields.flag("refine", true);
  step.tta = fields.flag("tta", false);
  step.semitransparency = fields.flag("semitransparency", true);
  step.has_roi = fields.has("roi");
  if (!step.has_roi) return;
  std::vector<double> roi = fields.numbers("roi", 4);
  std::vector<double> percent = fields.numbers("roiPercent", 4);
  for (size_t i = 0; i < 4; i++) {
    step.roi_percent[i] = percent[i] != 0;
    if (!(roi[i] >= 0 && roi[i] <= (step.roi_percent[i] ? 100 : kMaxRoiPixels)))
      throw Error("internal", "plan: removeBackground's roi is out of range");
    step.roi[i] = roi[i];
  }
  step.roi_of_input = fields.flag("roiOfInput", false);
}

// The region of interest, checked against the image's size before any pixel where that size is known.
void remove_background_cost(const Size &size, const Step &step, double &) {
  if (step.has_roi && size.exact && size.width <= VIPS_MAX_COORD && size.height <= VIPS_MAX_COORD)
    roi_box(step, int(size.width), int(size.height), int(size.input_width), int(size.input_height));
}

void run_remove_background(Frames &frames, const Step &step, const StepContext &context) {
  if (!context.model) throw model_error("removeBackground needs a model, and none is loaded");
  const Limits &limits = context.plan.limits;
  if (frames.count() > limits.max_matte_frames)
    throw image_too_large("removeBackground on " + std::to_string(frames.count()) +
                          " frames is more than the limit of " + std::to_string(limits.max_matte_frames));
  if (step.matte) step.matte->frames = frames.count();
  const MatteSettings settings = matte_settings(step, frames);
  // The step reads its input up to three times (the alpha check, the model's input, the image
  // it joins the matte to); lazily, each read would compute the steps before it again, and the
  // downscale to the model's size through a blur would recompute that blur tile by tile.
  if (context.reduced && frames.count() == 1 && !frames.is_strip()) {
    VImage out = remove_background_first(frames, *context.reduced, *context.model, step, settings, context.budget);
    frames.apply([&](const VImage &) { return out; });
  } else {
    materialise(frames, context.budget);
    frames.apply(
        [&](const VImage &image) { return remove_background(image, *context.model, step, settings, context.budget); });
  }
  frames.subject = subject_box(frames);
}

}  // namespace matte
