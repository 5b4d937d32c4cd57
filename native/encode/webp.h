// Still WebP output through libwebp directly, rather than libvips' webpsave: libvips 8.14 hands the
// whole picture to WebPEncode without a progress hook, so a large encode ran past the job's budget
// and ignored cancellation. libwebp calls the hook as it goes; it returns false once the job must
// stop, and the encode ends with VP8_ENC_ERROR_USER_ABORT.
#pragma once

#include <vips/vips8>
#include <webp/encode.h>

#include <cstddef>

namespace matte {

class Budget;

/**
 * Encodes one 8-bit sRGB image (3 bands, or 4 with alpha) as a still WebP with the settings of
 * libvips 8.14's webpsave with strip (preset default, `quality`, alpha quality 100, method 4),
 * the same file. The pixels are computed into memory first through a libvips sink (stopped by the
 * budget like any sink); then the encode polls `budget` (may be null). Throws the budget's Error
 * when stopped, matte::Error `internal` when libwebp fails. `*data` is g_malloc'ed.
 */
void encode_webp(const vips::VImage &image, int quality, Budget *budget, void **data, size_t *size);

/** webpsave's lossy settings in libvips 8.14 (preset default, `quality`, alpha quality 100, method 4). */
WebPConfig webp_config(int quality);

/**
 * A WebPPicture progress hook: with the job's Budget as the picture's user_data (may be null), it
 * returns false once the job must stop, and the encode ends with VP8_ENC_ERROR_USER_ABORT.
 */
int webp_keep_going(int percent, const WebPPicture *picture);

}  // namespace matte
