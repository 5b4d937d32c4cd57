#include "pipeline.h"

#include "budget.h"
#include "errors.h"
#include "load.h"
#include "matte/model.h"
#include "matte/model_input.h"
#include "sniff.h"
#include "steps/operations.h"
#include "steps/steps.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

using vips::VError;
using vips::VImage;

namespace matte {

namespace {

bool streams(const Plan &plan) {
  return std::all_of(plan.steps.begin(), plan.steps.end(), [](const Step &step) { return operation(step.op).streams; });
}

bool runs_on_strip(const Plan &plan) {
  return std::all_of(plan.steps.begin(), plan.steps.end(),
                     [](const Step &step) { return operation(step.op).on_strip(step); });
}

// What the steps will cost, from the image's size before any pixel: each step's cost on the size
// it receives, the sizes followed through the steps that change them.
void check_cost(const Frames &frames, const Plan &plan) {
  Size size{frames.logical_width, frames.logical_height, frames.count(), true, frames.input_width, frames.input_height};
  double work = 0;
  for (const Step &step : plan.steps) {
    const Operation &row = operation(step.op);
    if (row.cost) row.cost(size, step, work);
    if (row.shape) row.shape(size, step);
  }
}

// Format `auto`: whether any pixel of the result has alpha below 255. The frames are computed into
// memory first, so the encoder reads them rather than computing them again.
bool has_transparency(Frames &frames, Budget &budget) {
  if (!frames.has_alpha()) return false;
  materialise(frames, budget);
  for (const VImage &image : frames.images)
    if (image.extract_band(image.bands() - 1).min() < 255) return true;
  return false;
}

void apply(Frames &frames, const Step &step, const StepContext &context) {
  const Operation &row = operation(step.op);
  if (!row.keeps_layers) frames.flatten();
  if (frames.is_strip() && !row.on_strip(step)) frames.split();
  if (frames.lazy_neighbourhood && row.reads_regions) materialise(frames, context.budget);
  row.run(frames, step, context);
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
               const Plan &plan, Budget &budget) {
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
  // The job's second input: the background image, decoded the same way.
  if (plan.background) {
    LoadOptions background = strict;
    background.all_frames = background.strip = false;
    background.first_step = nullptr;
    background.role = "background image";
    if (!decodes(plan.background, plan.background_size, background, budget))
      return Error("unsupported_image", "the background image cannot be decoded: its data is corrupt or truncated",
                   "backgroundImage");
  }
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
  options.job_first_step = options.first_step;
  options.decode_later = true;

  try {
    budget.check();
    // The background image's header first: a bad one is refused before the input's decoder opens.
    check_background_image(plan);
    Frames frames = load(data, size, options);
    check_cost(frames, plan);
    budget.watch(frames);
    decode_in_memory(frames);
    budget.watch(frames);
    // A first removeBackground reads the model's input from a smaller decode (matte/model_input.h).
    std::optional<VImage> reduced;
    // Not with a matte handed in: the model will not run.
    if (model && !plan.steps.empty() && plan.steps.front().op == Op::RemoveBackground && frames.count() == 1 &&
        !frames.has_alpha() && !(plan.steps.front().matte && plan.steps.front().matte->given))
      reduced = reduced_for_model(data, size, options, model->spec().input_width, model->spec().input_height);
    for (const Step &step : plan.steps) {
      budget.check();
      apply(frames, step, {plan, model, budget, &step == &plan.steps.front() && reduced ? &*reduced : nullptr});
      budget.watch(frames);
    }
    budget.check();
    frames.flatten();
    Format format = plan.auto_format ? (has_transparency(frames, budget) ? Format::Png : Format::Jpeg) : plan.format;
    Encoded out = save(frames, format, plan.quality, &budget);
    out.foreground = frames.subject;
    return out;
  } catch (const VError &err) {
    // A stopped job fails inside libvips ("killed for image"): that is the budget, not the image.
    if (budget.stopped() != Budget::Stop::None) {
      vips_error_clear();
      throw budget.error();
    }
    throw classify(err.what(), data, size, options, plan, budget);
  }
}

}  // namespace matte
