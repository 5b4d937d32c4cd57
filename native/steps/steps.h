// One file per operation of docs/api.md's table ("Operations (edit)"). Each builds on libvips'
// lazy graph (nothing is computed until the encoder pulls pixels), except where a step must
// measure the image first (trim, removeBackground).
#pragma once

#include "operations.h"

#include <cstdint>

namespace matte {

/** The geometry of a resize step applied to an image of the given size (docs/api.md, "Operations (edit)"). */
ResizeGeometry resize_geometry(int width, int height, const Step &step);

/**
 * Resizes every frame by a checked geometry (the strip as one pipeline where it can), moving the
 * subject's box; a pad's box takes the step's colour (rgba).
 */
void resize_frames(Frames &frames, const ResizeGeometry &g, const Step &step);

/** Scales to exactly width x height (Lanczos3, alpha premultiplied). */
vips::VImage resize_exact(const vips::VImage &in, int width, int height);

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

// The staged cut-outs (docs/api.md, "Extensions: staged cut-outs").

/** size: the largest size within the cap, aspect kept (never enlarged). */
ResizeGeometry size_geometry(int width, int height, const Step &step);
void read_size(const PlanFields &fields, Step &step);
void run_size(Frames &frames, const Step &step, const StepContext &context);
void size_shape(Size &size, const Step &step);

void read_shadow(const PlanFields &fields, Step &step);
void run_shadow(Frames &frames, const Step &step, const StepContext &context);

void run_background_image(Frames &frames, const Step &step, const StepContext &context);
/** The plan's background image, checked from its header (type, limits, declared size) before any pixel of the job. */
void check_background_image(const Plan &plan);

void read_place(const PlanFields &fields, Step &step);
void run_place(Frames &frames, const Step &step, const StepContext &context);
void place_shape(Size &size, const Step &step);

// Responsive images (docs/api.md, "Extensions: responsive images"); resize's gravity is gravity.h.

void read_sharpen(const PlanFields &fields, Step &step);
void run_sharpen(Frames &frames, const Step &step, const StepContext &context);

void read_gamma(const PlanFields &fields, Step &step);
void run_gamma(Frames &frames, const Step &step, const StepContext &context);

/** extend's and crop's pixels a side (top, right, bottom, left). */
void read_edges(const PlanFields &fields, Step &step);
void read_extend(const PlanFields &fields, Step &step);
void run_extend(Frames &frames, const Step &step, const StepContext &context);
void extend_shape(Size &size, const Step &step);

void run_crop(Frames &frames, const Step &step, const StepContext &context);
void crop_shape(Size &size, const Step &step);
/** Refuses a crop that leaves nothing, before any pixel when the size is known. */
void crop_cost(const Size &size, const Step &step, double &work);

/** The shape of the steps whose output size depends on the pixels (trim, shadow): unknown before them. */
void unknown_shape(Size &size, const Step &step);
/** removeBackground's region of interest checked against the image's size when it is known before any pixel. */
void remove_background_cost(const Size &size, const Step &step, double &work);

}  // namespace matte
