#include "operations.h"

#include "../budget.h"
#include "steps.h"

#include <stdexcept>

namespace matte {

namespace {

bool always(const Step &) { return true; }
bool never(const Step &) { return false; }

// One row an operation (the columns: operations.h's Operation). Streaming: the step reads its input
// once, top to bottom. On the strip: per-pixel maps, a left-right mirror, and a resize (see
// resize_strip for its one difference at frame edges). Regions: a downscale and a rotation read
// overlapping regions; removeBackground reads its input up to three times and materialises it itself.
// The staged cut-outs: size is a downscale like resize; shadow, backgroundImage and place work on
// whole frames (a shadow's plane, the background covered to the frame, the subject's box). A shadow
// stays a layer of its own under the frames, which place moves with them and backgroundImage
// blends apart; every other step flattens it first. Responsive images: sharpen is a convolution
// (regions, per frame), gamma a per-pixel map, extend and crop change each frame's size.
const Operation kOperations[] = {
    // op                  name                read                    run                    streams strip        regions shape         cost                    downscale        layers
    {Op::Resize,           "resize",           read_resize,            run_resize,            true,  always,        true,  resize_shape,  nullptr,                resize_geometry, false},
    {Op::Rotate,           "rotate",           read_rotate,            run_rotate,            false, never,         true,  rotate_shape,  nullptr,                nullptr,         false},
    {Op::Flip,             "flip",             read_flip,              run_flip,              false, flip_on_strip, false, nullptr,       nullptr,                nullptr,         false},
    {Op::Blur,             "blur",             read_blur,              run_blur,              true,  never,         false, nullptr,       blur_cost,              nullptr,         false},
    {Op::Brightness,       "brightness",       read_tone,              run_brightness,        true,  always,        false, nullptr,       nullptr,                nullptr,         false},
    {Op::Contrast,         "contrast",         read_tone,              run_contrast,          true,  always,        false, nullptr,       nullptr,                nullptr,         false},
    {Op::Saturation,       "saturation",       read_tone,              run_saturation,        true,  always,        false, nullptr,       nullptr,                nullptr,         false},
    {Op::Background,       "background",       read_background,        run_background,        true,  always,        false, nullptr,       nullptr,                nullptr,         false},
    {Op::RemoveBackground, "removeBackground", read_remove_background, run_remove_background, false, never,         false, nullptr,       remove_background_cost, nullptr,         false},
    {Op::Trim,             "trim",             nullptr,                run_trim,              false, never,         false, unknown_shape, nullptr,                nullptr,         false},
    {Op::TrimTransparent,  "trimTransparent",  read_trim_transparent,  run_trim_transparent,  false, never,         false, unknown_shape, nullptr,                nullptr,         false},
    {Op::ExtractAlpha,     "extractAlpha",     nullptr,                run_extract_alpha,     false, never,         false, nullptr,       nullptr,                nullptr,         false},
    {Op::ExtractColour,    "extractColour",    nullptr,                run_extract_colour,    true,  always,        false, nullptr,       nullptr,                nullptr,         false},
    {Op::Size,             "size",             read_size,              run_size,              true,  always,        true,  size_shape,    nullptr,                size_geometry,   false},
    {Op::Shadow,           "shadow",           read_shadow,            run_shadow,            false, never,         false, unknown_shape, nullptr,                nullptr,         false},
    {Op::BackgroundImage,  "backgroundImage",  nullptr,                run_background_image,  true,  never,         false, nullptr,       nullptr,                nullptr,         true},
    {Op::Place,            "place",            read_place,             run_place,             false, never,         true,  place_shape,   nullptr,                nullptr,         true},
    {Op::Sharpen,          "sharpen",          read_sharpen,           run_sharpen,           true,  never,         true,  nullptr,       nullptr,                nullptr,         false},
    {Op::Gamma,            "gamma",            read_gamma,             run_gamma,             true,  always,        false, nullptr,       nullptr,                nullptr,         false},
    {Op::Extend,           "extend",           read_extend,            run_extend,            true,  never,         false, extend_shape,  nullptr,                nullptr,         false},
    {Op::Crop,             "crop",             read_edges,             run_crop,              true,  never,         false, crop_shape,    crop_cost,              nullptr,         false},
};

}  // namespace

const Operation &operation(Op op) {
  for (const Operation &row : kOperations)
    if (row.op == op) return row;
  throw std::logic_error("an operation without its row in operations.cc");
}

const Operation *operation_named(const std::string &name) {
  for (const Operation &row : kOperations)
    if (name == row.name) return &row;
  return nullptr;
}

void materialise(Frames &frames, Budget &budget) {
  frames.materialise();
  budget.watch(frames);
}

void unknown_shape(Size &size, const Step &) { size.exact = false; }

std::string size_text(int64_t width, int64_t height) { return std::to_string(width) + "x" + std::to_string(height); }

}  // namespace matte
