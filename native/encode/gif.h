// GIF output through libimagequant and cgif directly, the two libraries libvips 8.14's gifsave
// uses, with the same settings and the same file, rather than through gifsave itself: gifsave hands
// each whole frame to libimagequant and cgif without a progress callback, so a large GIF encode ran
// past the job's budget and ignored cancellation. Here libimagequant's progress callbacks (during
// quantisation, and once per row while remapping) and a check before each frame end the encode
// once the job must stop. See gif.cc.
#pragma once

#include <vips/vips8>

#include <cstddef>

namespace matte {

class Budget;

/**
 * Encodes an 8-bit sRGB image (3 bands, or 4 with alpha; grey and 16-bit are converted as libvips
 * does) as GIF, as libvips 8.14's gifsave with strip and its defaults: libimagequant at effort 7
 * (speed 4), quality 0-100, at most 255 colours, full Floyd-Steinberg dithering, alpha thresholded
 * at 128, the first frame's palette kept while later frames stay within an inter-palette error of 3
 * (else a local palette), pixels equal to the previous frame's made transparent, the frame's
 * changed area only. An animation is the frames stacked (page-height), with the "delay" (ms) and
 * "loop" metadata libvips' saver reads.
 * Frames are computed by a libvips sink (stopped by the budget like any sink); the encode polls
 * `budget` (may be null) and throws its Error once the job must stop. `*data` is g_malloc'ed.
 */
void encode_gif(const vips::VImage &image, Budget *budget, void **data, size_t *size);

}  // namespace matte
