// encodePng(pixels, width, height, bands, options): the PNG encoder alone, on raw 8-bit pixels, for
// the tests (test/engine/png.test.ts) and measurements; only the probes build exports it.
#pragma once

#include <napi.h>

namespace matte {

/**
 * encodePng(pixels: Buffer, width, height, bands 1-4, { threads?, stripeBytes?, libvips? }): Buffer.
 * `libvips: true` writes the same pixels with libvips' pngsave as native/save.cc would have (the
 * reference for size and structure). Runs on the calling thread.
 */
Napi::Value encode_png_probe(const Napi::CallbackInfo &info);

}  // namespace matte
