// A second look at a small subject: when the model's matte of the whole frame finds the subject
// in a small part of it, the model runs again on a crop around the subject, so the subject gets
// the model's whole input instead of a few dozen of its pixels (remove_background.cc). This file
// finds the crop and pastes the crop's matte back. bench/quality scores its rule (bench/README.md,
// "Background-removal quality").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <vips/vips8>

namespace matte {

class Budget;
struct RefineParams;

struct SecondPassParams {
  // The subject: model pixels with alpha >= `threshold` (0..255); all of them, however many
  // subjects, share one box. Its sure part, not its haze: a tighter box gives the subject more of
  // the model's input.
  int threshold = 192;
  // The box grows by this share of its width (height) on each side, within the frame: the model
  // sees some background around the subject.
  float grow = 0.1f;
  // The second pass runs only when the grown box covers fewer model pixels than this (its share
  // of the frame times the model's input): under 80% of the frame for a 320x320 model, under 8%
  // for a 1024x1024 one, whose subjects already get many model pixels.
  double max_model_pixels = 0.8 * 320 * 320;
  // Its matte is used only when it agrees with the first pass's in the box (matte_agreement) at
  // least this much: a crop that lost the subject's context finds another one. Judged at the
  // model's size, so a rejected crop is not refined.
  double min_agreement = 0.8;
  // No second pass when the model's matte has more than this many unsure pixels (between 10% and
  // 90%) per pixel of subject (>= 50%): it has not settled on a subject, and a crop around its
  // guess finds another one.
  double max_unsure = 2;
};

/** A rectangle of the full-resolution image. */
struct SubjectBox {
  int left = 0, top = 0, width = 0, height = 0;
};

/**
 * The full-resolution box (of a `width` x `height` image) around the subject of `matte` (the
 * model's matte, model_width x model_height), grown by params.grow; nothing when there is no
 * subject or when the box covers max_model_pixels or more.
 */
std::optional<SubjectBox> second_pass_box(const std::vector<uint8_t> &matte, int model_width, int model_height, int width,
                                   int height, const SecondPassParams &params);

/** Writes `part` (a one-band uchar image of box's size) into `alpha` (one-band uchar, in memory) at box. */
void paste_matte(vips::VImage &alpha, const vips::VImage &part, const SubjectBox &box);

/**
 * How far the crop's model matte (`part`, part_width x part_height over box) agrees with `alpha`
 * (the full-resolution matte, in memory) inside box: the intersection over union of alpha >= 128,
 * sampled at the centres of part's pixels; 1 when neither has any.
 */
double matte_agreement(const vips::VImage &alpha, const std::vector<uint8_t> &part, int part_width, int part_height,
                       const SubjectBox &box);

/** What the second pass did (the quality bench counts them). */
enum class SecondPassOutcome { NotRun, Rejected, Pasted };

/**
 * The second pass on `alpha` (the refined matte of `image`, in memory) from `matte` (the model's
 * matte of the whole frame, model_width x model_height): with a small subject, `infer` gives the
 * model's matte of the crop around it (from the crop's model-size image, `model_sized`), which is
 * refined at the crop's full resolution and pasted into `alpha` when it agrees with it.
 */
SecondPassOutcome second_pass(const vips::VImage &image, const std::vector<uint8_t> &matte, int model_width,
                              int model_height, const std::function<vips::VImage(const vips::VImage &)> &model_sized,
                              const std::function<std::vector<uint8_t>(const vips::VImage &)> &infer,
                              const SecondPassParams &params, const RefineParams &refine, Budget *budget,
                              vips::VImage &alpha);

}  // namespace matte
