#include "libheif.h"

#include "../errors.h"
#include "../libvips.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace matte {

namespace {

// The library the heif module links: already in the process once the module is loaded, so this
// dlopen only takes a reference to it (RTLD_LOCAL, as the module has it).
constexpr const char *kLibrary = "libheif.so.1";

struct Loaded {
  LibHeif functions{};
  std::string failure;  // empty when every function was found
};

template <typename F>
void resolve(void *handle, const char *name, F &slot, std::string &failure) {
  slot = reinterpret_cast<F>(dlsym(handle, name));
  if (!slot && failure.empty()) failure = std::string(kLibrary) + " has no " + name;
}

Loaded load() {
  Loaded loaded;
  // The module registers heifload (and heifsave, unused) with libvips; a libvips built without it
  // cannot decode HEIF/AVIF, which load.cc then reports as for any other missing loader.
  load_libvips_module("vips-heif.so");
  void *handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    loaded.failure = std::string("cannot load ") + kLibrary + ": " + dlerror();
    return loaded;
  }
  LibHeif &f = loaded.functions;
  std::string &e = loaded.failure;
  resolve(handle, "heif_context_alloc", f.context_alloc, e);
  resolve(handle, "heif_context_free", f.context_free, e);
  resolve(handle, "heif_context_get_encoder_for_format", f.context_get_encoder_for_format, e);
  resolve(handle, "heif_context_encode_image", f.context_encode_image, e);
  resolve(handle, "heif_context_write", f.context_write, e);
  resolve(handle, "heif_encoder_release", f.encoder_release, e);
  resolve(handle, "heif_encoder_set_lossy_quality", f.encoder_set_lossy_quality, e);
  resolve(handle, "heif_encoder_set_lossless", f.encoder_set_lossless, e);
  resolve(handle, "heif_encoder_set_parameter_integer", f.encoder_set_parameter_integer, e);
  resolve(handle, "heif_encoder_set_parameter_string", f.encoder_set_parameter_string, e);
  resolve(handle, "heif_image_create", f.image_create, e);
  resolve(handle, "heif_image_release", f.image_release, e);
  resolve(handle, "heif_image_add_plane", f.image_add_plane, e);
  resolve(handle, "heif_image_get_plane", f.image_get_plane, e);
  resolve(handle, "heif_image_handle_release", f.image_handle_release, e);
  resolve(handle, "heif_encoding_options_alloc", f.encoding_options_alloc, e);
  resolve(handle, "heif_encoding_options_free", f.encoding_options_free, e);
  return loaded;
}

}  // namespace

const LibHeif &libheif() {
  static const Loaded loaded = load();  // once; C++ makes the first call thread-safe
  if (!loaded.failure.empty()) throw Error("internal", "AVIF is unavailable: " + loaded.failure);
  return loaded.functions;
}

}  // namespace matte
