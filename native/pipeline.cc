#include "pipeline.h"

#include "errors.h"
#include "load.h"
#include "steps/steps.h"

#include <algorithm>
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

std::string size_text(int64_t width, int64_t height) { return std::to_string(width) + "x" + std::to_string(height); }

// Refuses a resize whose result (or the scaled image it is cropped from) is over the limits,
// before any pixel is computed.
void check_resize(const ResizeGeometry &g, const Step &step, const Frames &frames, const Limits &limits) {
  if (g.width > kMaxSide || g.height > kMaxSide)
    throw invalid_operation(step.index, "resize",
                            "would make a " + size_text(g.width, g.height) + " image, more than " +
                                std::to_string(kMaxSide) + " pixels on a side");
  uint64_t scaled = uint64_t(g.scaled_width) * uint64_t(g.scaled_height) * uint64_t(frames.count());
  if (scaled > limits.max_pixels)
    throw invalid_operation(step.index, "resize",
                            "would need a " + size_text(g.scaled_width, g.scaled_height) +
                                " image, more than the limit of " + std::to_string(limits.max_pixels) + " pixels");
}

// Crops every frame to one box: the union of the boxes found per frame, so frames stay equal.
template <typename FindBox>
void crop_to_union(Frames &frames, FindBox find_box) {
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
  if (!all || (all->width == frames.width() && all->height == frames.height())) return;
  frames.apply([&](const VImage &image) { return image.crop(all->left, all->top, all->width, all->height); });
}

// Steps that read their input region by region with overlapping margins: behind a lazy blur they
// must read a materialised image (see Frames::lazy_neighbourhood). removeBackground, which reads its
// input up to three times, always does (see its case below).
bool reads_regions(Op op) { return op == Op::Resize || op == Op::Rotate; }

void apply(Frames &frames, const Step &step, const Plan &plan, const Model *model) {
  if (frames.lazy_neighbourhood && reads_regions(step.op)) frames.materialise();
  switch (step.op) {
    case Op::Resize: {
      ResizeGeometry g = resize_geometry(frames.logical_width, frames.logical_height, step);
      check_resize(g, step, frames, plan.limits);
      frames.apply([&](const VImage &image) { return resize(image, g); });
      return;
    }
    case Op::Rotate: return frames.apply([&](const VImage &image) { return rotate(image, step); });
    case Op::Flip: return frames.apply([&](const VImage &image) { return flip(image, step); });
    case Op::Blur:
      frames.apply([&](const VImage &image) { return blur(image, step); });
      frames.lazy_neighbourhood = step.value > 0;
      return;
    case Op::Brightness: return frames.apply([&](const VImage &image) { return brightness(image, step); });
    case Op::Contrast: return frames.apply([&](const VImage &image) { return contrast(image, step); });
    case Op::Saturation: return frames.apply([&](const VImage &image) { return saturation(image, step); });
    case Op::Background: return frames.apply([&](const VImage &image) { return background(image, step); });
    case Op::RemoveBackground: {
      if (!model) throw model_error("removeBackground needs a model, and none is loaded");
      if (frames.count() > plan.limits.max_matte_frames)
        throw image_too_large("removeBackground on " + std::to_string(frames.count()) +
                              " frames is more than the limit of " + std::to_string(plan.limits.max_matte_frames));
      // The step reads its input up to three times (the alpha check, the model's input, the image
      // it joins the matte to); lazily, each read would compute the steps before it again, and the
      // downscale to the model's size through a blur recomputes it tile by tile (blur 20 then
      // removeBackground on 4000x3000: 22 s lazily, 0.7 s materialised).
      frames.materialise();
      return frames.apply([&](const VImage &image) { return remove_background(image, *model, step); });
    }
    case Op::Trim: return crop_to_union(frames, find_trim_box);
    case Op::TrimTransparent: return crop_to_union(frames, find_opaque_box);
  }
}

// Whether the input decodes completely on its own, loaded exactly as the job loaded it but with
// no step: pixels are pulled through a cheap sink (the mean), frame after frame.
bool decodes(const uint8_t *data, size_t size, const LoadOptions &options) {
  try {
    Frames frames = load(data, size, options);
    for (const VImage &frame : frames.images) frame.avg();
    return true;
  } catch (const VError &) {
    vips_error_clear();
    return false;
  } catch (const Error &) {
    return false;
  }
}

// Whether an error message comes from one of the decoders (libvips prefixes its messages with the
// loader's domain).
bool from_decoder(const std::string &message) {
  static const char *domains[] = {"load",   "VipsJpeg", "vipspng", "spng", "png2vips", "gif",
                                  "webp",   "heif",     "tiff",    "jpeg", "Premature end"};
  for (const char *domain : domains)
    if (message.find(domain) != std::string::npos) return true;
  return false;
}

// An error raised while pixels are computed comes from a decoder meeting bad data (the input's
// fault) or from us. When the message names no decoder, the input is decoded again on its own:
// only if that succeeds is the failure ours.
Error classify(const VError &err, const uint8_t *data, size_t size, const LoadOptions &options) {
  std::string message = err.what();
  vips_error_clear();
  std::string first_line = message.substr(0, message.find('\n'));
  if (from_decoder(message) || !decodes(data, size, options))
    return unsupported_image("the image cannot be decoded: " + first_line);
  return Error("internal", "image processing failed: " + first_line);
}

}  // namespace

Encoded run(const uint8_t *data, size_t size, const Plan &plan, const Model *model) {
  LoadOptions options;
  options.all_frames = plan.anim && can_animate(plan.format);
  options.sequential = streams(plan) && !options.all_frames;
  options.limits = plan.limits;
  options.first_step = plan.steps.empty() ? nullptr : &plan.steps.front();

  try {
    Frames frames = load(data, size, options);
    for (const Step &step : plan.steps) apply(frames, step, plan, model);
    return save(frames, plan.format, plan.quality);
  } catch (const VError &err) {
    throw classify(err, data, size, options);
  }
}

}  // namespace matte
