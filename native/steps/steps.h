// One file per operation of docs/api.md's table ("Operations (edit)"). Each builds on libvips'
// lazy graph (nothing is computed until the encoder pulls pixels), except where a step must
// measure the image first (trim, removeBackground).
#pragma once

#include "operations.h"

#include <cstdint>

namespace matte {

/**
 * Scale to scaled_width x scaled_height, then take the centre width x height. 64-bit: a thin image
 * scaled to a given width can ask for a side far beyond int (1 x 4194305 to width 1024: 4.3e9);
 * run_resize checks the sizes against the limits before narrowing them.
 */
struct ResizeGeometry {
  int64_t scaled_width;
  int64_t scaled_height;
  int64_t width;
  int64_t height;
};

/** The geometry of a resize step applied to an image of the given size (docs/api.md, "Operations (edit)"). */
ResizeGeometry resize_geometry(int width, int height, const Step &step);

// Each operation's entry points, defined in its file and listed in its row (operations.cc).
// read_*: its fields from the plan; run_*: the step on the job's frames; *_shape, *_cost: what the
// pipeline knows of it before any pixel (operations.h).

void read_resize(const PlanFields &fields, Step &step);
void run_resize(Frames &frames, const Step &step, const StepContext &context);
void resize_shape(Size &size, const Step &step);

void read_rotate(const PlanFields &fields, Step &step);
void run_rotate(Frames &frames, const Step &step, const StepContext &context);
void rotate_shape(Size &size, const Step &step);

void read_flip(const PlanFields &fields, Step &step);
void run_flip(Frames &frames, const Step &step, const StepContext &context);
bool flip_on_strip(const Step &step);

void read_blur(const PlanFields &fields, Step &step);
void run_blur(Frames &frames, const Step &step, const StepContext &context);
void blur_cost(const Size &size, const Step &step, double &work);

/** brightness, contrast and saturation: one factor each. */
void read_tone(const PlanFields &fields, Step &step);
void run_brightness(Frames &frames, const Step &step, const StepContext &context);
void run_contrast(Frames &frames, const Step &step, const StepContext &context);
void run_saturation(Frames &frames, const Step &step, const StepContext &context);

void read_background(const PlanFields &fields, Step &step);
void run_background(Frames &frames, const Step &step, const StepContext &context);

void read_remove_background(const PlanFields &fields, Step &step);
void run_remove_background(Frames &frames, const Step &step, const StepContext &context);

void run_trim(Frames &frames, const Step &step, const StepContext &context);
void read_trim_transparent(const PlanFields &fields, Step &step);
void run_trim_transparent(Frames &frames, const Step &step, const StepContext &context);
void run_extract_alpha(Frames &frames, const Step &step, const StepContext &context);
void run_extract_colour(Frames &frames, const Step &step, const StepContext &context);

}  // namespace matte
