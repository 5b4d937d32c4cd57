#include "png_probe.h"

#include "../encode/png.h"

#include <vips/vips8>

#include <string>

namespace matte {

namespace {

int int_option(const Napi::Object &options, const char *key) {
  Napi::Value v = options.Get(key);
  return v.IsNumber() ? v.As<Napi::Number>().Int32Value() : 0;
}

}  // namespace

Napi::Value encode_png_probe(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsBuffer() || !info[1].IsNumber() || !info[2].IsNumber() || !info[3].IsNumber()) {
    Napi::TypeError::New(env, "encodePng(pixels, width, height, bands, options)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::Buffer<uint8_t> pixels = info[0].As<Napi::Buffer<uint8_t>>();
  int width = info[1].As<Napi::Number>().Int32Value();
  int height = info[2].As<Napi::Number>().Int32Value();
  int bands = info[3].As<Napi::Number>().Int32Value();
  Napi::Object options = info.Length() > 4 && info[4].IsObject() ? info[4].As<Napi::Object>() : Napi::Object::New(env);
  if (width < 1 || height < 1 || bands < 1 || bands > 4 || pixels.Length() != size_t(width) * height * bands) {
    Napi::RangeError::New(env, "encodePng: pixels must hold width x height x bands (1-4) bytes").ThrowAsJavaScriptException();
    return env.Undefined();
  }

  PngOptions png;
  png.threads = int_option(options, "threads");
  png.stripe_bytes = size_t(std::max(0, int_option(options, "stripeBytes")));
  bool libvips = options.Get("libvips").ToBoolean();

  void *data = nullptr;
  size_t size = 0;
  try {
    // The pixels stay alive (and unchanged) for this synchronous call: no copy is needed.
    vips::VImage image = vips::VImage::new_from_memory(pixels.Data(), pixels.Length(), width, height, bands,
                                                           VIPS_FORMAT_UCHAR);
    image = image.copy(vips::VImage::option()->set(
        "interpretation", bands < 3 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB));
    if (libvips) {
      image.write_to_buffer(".png", &data, &size, vips::VImage::option()->set("strip", true)->set("compression", 6));
    } else {
      if (!png_encodable(image)) throw std::runtime_error("the image is not one matte's PNG encoder writes");
      encode_png(image, &data, &size, png);
    }
  } catch (const std::exception &e) {
    vips_error_clear();
    Napi::Error::New(env, std::string("encodePng: ") + e.what()).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return Napi::Buffer<uint8_t>::New(env, static_cast<uint8_t *>(data), size, [](Napi::Env, uint8_t *d) { g_free(d); });
}

}  // namespace matte
