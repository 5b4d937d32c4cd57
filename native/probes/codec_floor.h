// codecFloor(jpeg, options): what a thumbnail cannot avoid, measured through the same libjpeg-turbo
// and libwebp the addon uses (bench/thumbs.ts prints it beside the servers' CPU a request); only
// the probes build exports it.
#pragma once

#include <napi.h>

namespace matte {

/**
 * codecFloor(jpeg: Buffer, { shrink: 1|2|4|8, width, height, format: 'jpeg'|'webp', quality, runs }):
 * { decodeMs, encodeMs, decodedWidth, decodedHeight, bytes }. decodeMs is the decode of `jpeg` at DCT
 * scale 1/shrink as libvips 8.14's jpegload does it (islow IDCT, fancy upsampling, RGB out);
 * encodeMs the encode of a width x height image (sampled from the decoded one, untimed) as
 * native/save.cc writes it. Each is the median CPU time of the calling thread over `runs`.
 */
Napi::Value codec_floor_probe(const Napi::CallbackInfo &info);

}  // namespace matte
