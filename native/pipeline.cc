#include "pipeline.h"

#include "budget.h"
#include "errors.h"
#include "load.h"
#include "matte/model.h"
#include "matte/model_input.h"
#include "sniff.h"
#include "steps/steps.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <future>
#include <optional>
#include <string>

using vips::VError;
using vips::VImage;

namespace matte {

namespace {

const int kMaxSide = 10000;

// Steps that read their input once, top to bottom, so the decoder can stream (sequential access).
bool streams(const Plan &plan) {
  for (const Step &step : plan.steps) {
    switch (step.op) {
      case Op::Resize:
      case Op::Blur:
      case Op::Brightness:
      case Op::Contrast:
      case Op::Saturation:
      case Op::Background:
        continue;
      default:
        return false;
    }
  }
  return true;
}

// Steps that give the same pixels on the frame strip as frame by frame, so an animation stays one
// strip (one libvips pipeline over every frame) through them: per-pixel maps, a left-right mirror,
// and a resize (see resize_strip for its one difference at frame edges).
bool runs_on_strip(const Step &step) {
  switch (step.op) {
    case Op::Resize:
    case Op::Brightness:
    case Op::Contrast:
    case Op::Saturation:
    case Op::Background:
      return true;
    case Op::Flip:
      return !step.vertical;
    default:
      return false;
  }
}

bool runs_on_strip(const Plan &plan) {
  return std::all_of(plan.steps.begin(), plan.steps.end(), [](const Step &step) { return runs_on_strip(step); });
}

std::string size_text(int64_t width, int64_t height) { return std::to_string(width) + "x" + std::to_string(height); }

std::string scientific(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", value);
  return text;
}

// Refuses a resize whose result (or the scaled image it is cropped from) is over the limits,
// before any pixel is computed.
void check_resize(const ResizeGeometry &g, const Step &step, const Frames &frames, const Limits &limits) {
  if (g.width > kMaxSide || g.height > kMaxSide)
    throw invalid_operation(step.index, "resize",
                            "would make a " + size_text(g.width, g.height) + " image, more than " +
                                std::to_string(kMaxSide) + " pixels on a side");
  // In double: the sides are 64-bit and their product may not fit in 64 bits.
  double scaled = double(g.scaled_width) * double(g.scaled_height) * double(frames.count());
  if (scaled > double(limits.max_pixels))
    throw invalid_operation(step.index, "resize",
                            "would need a " + size_text(g.scaled_width, g.scaled_height) +
                                " image, more than the limit of " + std::to_string(limits.max_pixels) + " pixels");
  // With a very high pixel limit, a side could still pass what libvips (and int) can address.
  if (g.scaled_width > VIPS_MAX_COORD || g.scaled_height > VIPS_MAX_COORD)
    throw invalid_operation(step.index, "resize",
                            "would need a " + size_text(g.scaled_width, g.scaled_height) + " image, more than " +
                                std::to_string(VIPS_MAX_COORD) + " pixels on a side");
}

// The work of the plan's blurs, known before any pixel: sum over blur steps of the pixels they
// touch (all frames) x their radius. A blur's time grows with both (docs/api.md, "Cost before pixels"):
// ~1 ns of CPU per unit on a 2-core x86 once its input is materialised, so one blur of 250 over the
// 100-MP maximum (2.5e10) is ~25 s of CPU. The bound is twice that: it admits any single blur of any
// image within the limits, and refuses stacks of wide blurs over huge images (three blurs of 250
// over 10000x10000 ran for more than 16 minutes before; several blurs of sigma s are one blur of
// sigma s x sqrt(n), which the schema's radius limit refuses anyway).
const double kMaxBlurWork = 5e10;

void check_blur_work(const Frames &frames, const Plan &plan) {
  int64_t width = frames.logical_width, height = frames.logical_height;
  double work = 0;
  for (const Step &step : plan.steps) {
    switch (step.op) {
      case Op::Resize: {
        ResizeGeometry g = resize_geometry(int(width), int(height), step);
        width = g.width;
        height = g.height;
        break;
      }
      case Op::Rotate:
        if (step.angle != 180) std::swap(width, height);
        break;
      case Op::Blur: {
        // Trim may shrink the image before a blur: the estimate assumes it does not (an upper bound).
        work += double(width) * double(height) * frames.count() * step.value;
        if (work > kMaxBlurWork)
          throw invalid_operation(step.index, "blur",
                                  "is refused before any pixel is computed: the blurs up to this one would cost " +
                                      scientific(work) + " pixels x radius (this one: " + size_text(width, height) +
                                      (frames.count() > 1 ? " x " + std::to_string(frames.count()) + " frames" : "") +
                                      " x " + std::to_string(int(step.value)) + "), more than the limit of " +
                                      scientific(kMaxBlurWork) + " (two blurs of radius 250 over 100 megapixels); " +
                                      "blur a smaller image, or use one blur with a smaller radius");
        break;
      }
      default:
        break;
    }
  }
}

// Crops every frame to one box: the union of the boxes found per frame, so frames stay equal.
template <typename FindBox>
void crop_to_union(Frames &frames, FindBox find_box) {
  frames.split();
  std::optional<Box> all;
  for (const VImage &image : frames.images) {
    std::optional<Box> box = find_box(image);
    if (!box) continue;
    if (!all) {
      all = box;
      continue;
    }
    int right = std::max(all->left + all->width, box->left + box->width);
    int bottom = std::max(all->top + all->height, box->top + box->height);
    all->left = std::min(all->left, box->left);
    all->top = std::min(all->top, box->top);
    all->width = right - all->left;
    all->height = bottom - all->top;
  }
  if (!all || (all->left == 0 && all->top == 0 && all->width == frames.width() && all->height == frames.height())) return;
  frames.apply([&](const VImage &image) { return box_of(image, *all); });
}

// The remove-background endpoint's trim: the union of the frames' boxes of alpha > 0, grown by the
// step's margin; past the image's edge the canvas grows with transparent pixels (box_of).
void trim_transparent(Frames &frames, const Step &step, const Limits &limits) {
  if (step.margin == 0) return crop_to_union(frames, find_opaque_box);
  crop_to_union(frames, [&](const VImage &image) -> std::optional<Box> {
    std::optional<Box> box = find_opaque_box(image);
    if (!box) return box;
    Box grown = with_margin(*box, step.margin, step.margin_percent);
    if (double(grown.width) * grown.height * frames.count() > double(limits.max_pixels))
      throw image_too_large("trim_margin would make a " + size_text(grown.width, grown.height) +
                            " image, more than the limit of " + std::to_string(limits.max_pixels) + " pixels");
    return grown;
  });
}

// Steps that read their input region by region with overlapping margins: behind a lazy blur they
// must read a materialised image (see Frames::lazy_neighbourhood). removeBackground, which reads its
// input up to three times, always does (see its case below).
bool reads_regions(Op op) { return op == Op::Resize || op == Op::Rotate; }

// A materialised frame no longer signals progress (libvips drops the link): watch it again.
void materialise(Frames &frames, Budget &budget) {
  frames.materialise();
  budget.watch(frames);
}

// A wide blur reads every output tile's input with a margin of about its radius on each side, and
// libvips keeps no cache between the two: whatever is lazy before it (an upscale, another blur) is
// computed again for every overlap. Measured (docs/api.md, "Cost before pixels"): resize 512 ->
// 2500x2500 then blur 250, 5.5 s of CPU lazily, 1.5 s with the upscale materialised first; three
// blurs of 250 in a row, 51 s and 4 s. The pixels are identical.
const double kWideBlur = 20;

bool in_memory(const Frames &frames) {
  for (const VImage &image : frames.images) {
    VipsImageType type = image.get_image()->dtype;
    if (type != VIPS_IMAGE_SETBUF && type != VIPS_IMAGE_SETBUF_FOREIGN) return false;
  }
  return true;
}

// A resize of a strip: one scale of the whole strip, then (cover, crop) the same centre box of
// every frame, taken as crops of that one pipeline.
void resize_frames(Frames &frames, const ResizeGeometry &g) {
  // An upscale goes frame by frame: its interpolation at a frame's first row would mix in half of
  // the frame above (measured: 50% at 2x), where a downscale's kernel takes a few percent.
  if (frames.is_strip() && g.scaled_height > frames.height()) frames.split();
  if (!frames.is_strip()) return frames.apply([&](const VImage &image) { return resize(image, g); });
  frames.apply_pointwise([&](const VImage &strip) { return resize_strip(strip, frames.strip_pages, g); });
  if (frames.width() == g.width && frames.height() == g.height) return;
  frames.apply([&](const VImage &image) { return resize(image, g); });  // only the centre crop is left
}

// removeBackground as the first step of a still image, with the model's input from its own smaller
// decode (matte/model_input.h): the full-size image is decoded on another thread meanwhile, so
// the decoder (one thread) runs beside the model instead of before it.
VImage remove_background_first(Frames &frames, const VImage &reduced, const Model &model, const Step &step,
                               Budget &budget) {
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
      model, step, budget);
}

void apply(Frames &frames, const Step &step, const Plan &plan, const Model *model, Budget &budget,
           const VImage *reduced) {
  if (frames.is_strip() && !runs_on_strip(step)) frames.split();
  if (frames.lazy_neighbourhood && reads_regions(step.op)) materialise(frames, budget);
  switch (step.op) {
    case Op::Resize: {
      ResizeGeometry g = resize_geometry(frames.logical_width, frames.logical_height, step);
      check_resize(g, step, frames, plan.limits);
      resize_frames(frames, g);
      return;
    }
    case Op::Rotate: return frames.apply([&](const VImage &image) { return rotate(image, step); });
    case Op::Flip:
      if (frames.is_strip()) return frames.apply_pointwise([&](const VImage &image) { return flip(image, step); });
      return frames.apply([&](const VImage &image) { return flip(image, step); });
    case Op::Blur:
      if (step.value > kWideBlur && !in_memory(frames)) materialise(frames, budget);
      frames.apply([&](const VImage &image) { return blur(image, step); });
      frames.lazy_neighbourhood = step.value > 0;
      return;
    case Op::Brightness: return frames.apply_pointwise([&](const VImage &image) { return brightness(image, step); });
    case Op::Contrast: return frames.apply_pointwise([&](const VImage &image) { return contrast(image, step); });
    case Op::Saturation: return frames.apply_pointwise([&](const VImage &image) { return saturation(image, step); });
    case Op::Background: return frames.apply_pointwise([&](const VImage &image) { return background(image, step); });
    case Op::RemoveBackground: {
      if (!model) throw model_error("removeBackground needs a model, and none is loaded");
      if (frames.count() > plan.limits.max_matte_frames)
        throw image_too_large("removeBackground on " + std::to_string(frames.count()) +
                              " frames is more than the limit of " + std::to_string(plan.limits.max_matte_frames));
      if (step.matte) step.matte->frames = frames.count();
      // The step reads its input up to three times (the alpha check, the model's input, the image
      // it joins the matte to); lazily, each read would compute the steps before it again, and the
      // downscale to the model's size through a blur recomputes it tile by tile (blur 20 then
      // removeBackground on 4000x3000: 22 s lazily, 0.7 s materialised).
      if (reduced && frames.count() == 1 && !frames.is_strip()) {
        VImage out = remove_background_first(frames, *reduced, *model, step, budget);
        return frames.apply([&](const VImage &) { return out; });
      }
      materialise(frames, budget);
      return frames.apply([&](const VImage &image) { return remove_background(image, *model, step, budget); });
    }
    case Op::Trim: return crop_to_union(frames, find_trim_box);
    case Op::TrimTransparent: return trim_transparent(frames, step, plan.limits);
    case Op::ExtractAlpha: return frames.apply([&](const VImage &image) { return extract_alpha(image); });
  }
}

// Whether the input decodes completely on its own, loaded exactly as the job loaded it but with
// no step: pixels are pulled through a cheap sink (the mean), frame after frame. It is a second
// decode of the whole input, so it runs under the job's budget and cancellation: a stop throws
// the job's error.
bool decodes(const uint8_t *data, size_t size, const LoadOptions &options, Budget &budget) {
  try {
    budget.check();
    Frames frames = load(data, size, options);
    budget.watch(frames);
    for (const VImage &frame : frames.images) {
      budget.check();
      frame.avg();
    }
    return true;
  } catch (const VError &) {
    vips_error_clear();
    budget.check();
    return false;
  } catch (const Error &) {
    budget.check();
    return false;
  }
}

// An error raised while pixels are computed comes from a decoder meeting bad data (the input's
// fault) or from us. libvips' error buffer is one for the whole process: under concurrency its text
// may be another job's, or hold several jobs' lines, so the message is never taken from it (it
// names this job's own image type), and the code comes first from this job's own evidence: its
// input decoded again on its own, strictly (data the decoder skips with a warning can still make a
// job fail, e.g. through libvips' out-of-order read check, which depends on thread timing). That
// text may also name no decoder at all: libtiff's codecs report under their own names ("ZIPDecode:
// Decoding error at scanline 0") and libvips adds no line of its own. Only as a fallback is the
// captured text read, and only for this job's own decoder (a line of a decoder of the same type in
// another job can at worst turn our 500 into a 415, never give another text).
Error classify(const std::string &captured, const uint8_t *data, size_t size, const LoadOptions &options,
               Budget &budget) {
  vips_error_clear();  // keeps the shared buffer short; no job's message is read from it
  std::optional<ImageType> type = sniff(data, size);
  std::string name = type ? type_name(*type) : "input";
  LoadOptions strict = options;
  strict.strict = true;
  std::string text = captured;
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  bool own_decoder = type && text.find(name) != std::string::npos;
  if (own_decoder || !decodes(data, size, strict, budget))
    return unsupported_image("the " + name + " image cannot be decoded: its data is corrupt or truncated");
  return Error("internal", "image processing failed");
}

}  // namespace

Encoded run(const uint8_t *data, size_t size, const Plan &plan, const Model *model, Budget &budget) {
  LoadOptions options;
  options.all_frames = plan.anim && can_animate(plan.format);
  // An animation is decoded as one strip; it can stream when every step runs on the strip (the
  // strip is read once, top to bottom). Per-frame steps read the frames as crops of a decoded strip.
  options.strip = options.all_frames;
  options.sequential = streams(plan) && (!options.all_frames || runs_on_strip(plan));
  options.limits = plan.limits;
  options.first_step = plan.steps.empty() ? nullptr : &plan.steps.front();

  try {
    budget.check();
    Frames frames = load(data, size, options);
    check_blur_work(frames, plan);
    budget.watch(frames);
    // A first removeBackground reads the model's input from a smaller decode (matte/model_input.h).
    std::optional<VImage> reduced;
    // Not with a matte handed in: the model will not run.
    if (model && !plan.steps.empty() && plan.steps.front().op == Op::RemoveBackground && frames.count() == 1 &&
        !frames.has_alpha() && !(plan.steps.front().matte && plan.steps.front().matte->given))
      reduced = reduced_for_model(data, size, options, model->spec().input_width, model->spec().input_height);
    for (const Step &step : plan.steps) {
      budget.check();
      apply(frames, step, plan, model, budget, &step == &plan.steps.front() && reduced ? &*reduced : nullptr);
      budget.watch(frames);
    }
    budget.check();
    return save(frames, plan.format, plan.quality, &budget);
  } catch (const VError &err) {
    // A stopped job fails inside libvips ("killed for image"): that is the budget, not the image.
    if (budget.stopped() != Budget::Stop::None) {
      vips_error_clear();
      throw budget.error();
    }
    throw classify(err.what(), data, size, options, budget);
  }
}

}  // namespace matte
