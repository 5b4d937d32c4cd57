// libheif, opened on the first HEIF/AVIF decode or AVIF encode rather than linked.
//
// libheif brings its codecs with it (libaom, libx265, libde265, libdav1d, libnuma): resident
// memory in every process from its start, for a format most jobs never touch. The addon compiles
// against libheif's header but does not link it; the first job that needs it loads libvips' heif
// module privately (which opens libheif.so.1 as its dependency, native/libvips.cc) and resolves the
// functions the AVIF encoder calls from that same library object.
#pragma once

#include <libheif/heif.h>

namespace matte {

/** The libheif functions native/encode/avif.cc calls, with libheif's own signatures. */
struct LibHeif {
  decltype(&::heif_context_alloc) context_alloc;
  decltype(&::heif_context_free) context_free;
  decltype(&::heif_context_get_encoder_for_format) context_get_encoder_for_format;
  decltype(&::heif_context_encode_image) context_encode_image;
  decltype(&::heif_context_write) context_write;
  decltype(&::heif_encoder_release) encoder_release;
  decltype(&::heif_encoder_set_lossy_quality) encoder_set_lossy_quality;
  decltype(&::heif_encoder_set_lossless) encoder_set_lossless;
  decltype(&::heif_encoder_set_parameter_integer) encoder_set_parameter_integer;
  decltype(&::heif_encoder_set_parameter_string) encoder_set_parameter_string;
  decltype(&::heif_image_create) image_create;
  decltype(&::heif_image_release) image_release;
  decltype(&::heif_image_add_plane) image_add_plane;
  decltype(&::heif_image_get_plane) image_get_plane;
  decltype(&::heif_image_handle_release) image_handle_release;
  decltype(&::heif_encoding_options_alloc) encoding_options_alloc;
  decltype(&::heif_encoding_options_free) encoding_options_free;
};

/**
 * Loads libvips' heif module (HEIF/AVIF decoding) and libheif once, thread-safe, and returns
 * libheif's functions. Throws matte::Error `internal` naming what is missing.
 */
const LibHeif &libheif();

}  // namespace matte
