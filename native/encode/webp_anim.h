// Animated WebP output through libwebp's WebPAnimEncoder directly, rather than libvips' webpsave:
// libvips 8.14 hands each frame to WebPAnimEncoderAdd without a progress hook, so a large animated
// WebP encode ran past the job's budget and ignored cancellation. libwebp (1.2.4, Debian 12)
// passes the frame's progress hook on to every candidate encode of the frame, so the hook of the
// still encoder (encode/webp.h) stops it; the budget is also checked before each frame.
#pragma once

#include <vips/vips8>

#include <cstddef>

namespace matte {

class Budget;

/**
 * Encodes an animation (8-bit sRGB, 3 bands or 4 with alpha; its frames stacked, page-height, with
 * the "delay" (ms) and "loop" metadata) as animated WebP with the settings of libvips 8.14's
 * webpsave with strip: lossy, preset default, `quality`, alpha quality 100, method 4; no key
 * frames (kmin INT_MAX - 1, kmax INT_MAX), no min_size, no mixed; a frame's delay of 10 ms or less
 * becomes 100 ms. Frames are computed by a libvips sink (stopped by the budget like any sink), one
 * at a time. Throws the budget's Error when stopped, matte::Error `internal` when libwebp fails.
 * `*data` is g_malloc'ed.
 */
void encode_animated_webp(const vips::VImage &image, int quality, Budget *budget, void **data, size_t *size);

}  // namespace matte
