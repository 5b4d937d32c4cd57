// The model's matte of an image: what removeBackground and resize's subject gravity share (the same
// input image, the same normalisation, the same inference).
#pragma once

#include "../matte/model.h"

#include <vips/vips8>

#include <cstdint>
#include <vector>

namespace matte {

class Budget;

/** Resizes to exactly width x height (the model's input ignores the aspect ratio). */
vips::VImage stretch(const vips::VImage &in, int width, int height, VipsKernel kernel);

/** The 3-band 8-bit image the model and the cut-out are made from. */
vips::VImage colour_of(const vips::VImage &image);

/** The model-size image the model reads, stretched from `rgb` (any size), in memory. */
vips::VImage model_sized(const vips::VImage &rgb, const ModelSpec &spec);

/**
 * The model's matte of `small` (model-sized RGB, model_sized), input_width x input_height bytes;
 * with test-time augmentation, the mean of the mattes of the image and of its mirror image.
 */
std::vector<uint8_t> model_matte(const vips::VImage &small, const Model &model, bool tta, Budget &budget);

}  // namespace matte
