// The probes build (matte_probes.node): the product addon's exports plus what tests and benches
// measure with, never shipped (scripts/pack.mjs packs matte.node only). A process loads one build
// of the addon, so a suite that needs a probe loads this one as the addon (test/helpers/probes.ts).
//   infer(model, chw)   the model alone on a normalised planar tensor: its post-processed matte
//   encodePng(...)      the PNG encoder alone on raw pixels (png_probe.h)
//   codecFloor(...)     a thumbnail's decode and encode alone, CPU time (codec_floor.h)
#include "../addon.h"
#include "codec_floor.h"
#include "png_probe.h"

#include <utility>
#include <vector>

namespace matte::addon {

namespace {

class InferWorker : public Worker {
 public:
  InferWorker(Napi::Env env, ModelPtr model, std::vector<float> chw)
      : Worker(env), model_(std::move(model)), chw_(std::move(chw)) {}

 protected:
  void Work() override { matte_ = model_->infer(std::move(chw_)); }
  Napi::Value Result(Napi::Env env) override {
    Napi::Object result = Napi::Object::New(env);
    result.Set("data", Napi::Buffer<uint8_t>::Copy(env, matte_.data(), matte_.size()));
    result.Set("width", model_->spec().input_width);
    result.Set("height", model_->spec().input_height);
    return result;
  }

 private:
  ModelPtr model_;
  std::vector<float> chw_;
  std::vector<uint8_t> matte_;
};

Napi::Value Infer(const Napi::CallbackInfo &info) {
  return start(info.Env(), [&]() {
    ModelPtr model = model_from(info[0]);
    if (!model) throw Error("internal", "infer needs a model");
    if (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
      throw Error("internal", "infer needs a Float32Array");
    Napi::Float32Array array = info[1].As<Napi::Float32Array>();
    return new InferWorker(info.Env(), model, std::vector<float>(array.Data(), array.Data() + array.ElementLength()));
  });
}

Napi::Object init_probes(Napi::Env env, Napi::Object exports) {
  init(env, exports);
  exports.Set("infer", Napi::Function::New(env, Infer));
  exports.Set("encodePng", Napi::Function::New(env, encode_png_probe));
  exports.Set("codecFloor", Napi::Function::New(env, codec_floor_probe));
  return exports;
}

}  // namespace

}  // namespace matte::addon

namespace {
Napi::Object Init(Napi::Env env, Napi::Object exports) { return matte::addon::init_probes(env, exports); }
}  // namespace
NODE_API_MODULE(matte_probes, Init)
