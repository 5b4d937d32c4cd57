// The N-API surface only: argument conversion, the async workers and error mapping. The work
// itself is pipeline.cc (edit) and matte/model.cc (the model). It exports what lib/ uses; the
// probes build (native/probes/) adds what tests and benches measure with.
#include "addon.h"

#include "budget.h"
#include "counters.h"
#include "libvips.h"
#include "matte/onnxruntime.h"
#include "pipeline.h"
#include "steps/operations.h"

#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace matte::addon {

namespace {

// ---- argument conversion (lib/ validated everything; this checks what the native side relies on)

std::string get_string(const Napi::Object &o, const char *key) {
  Napi::Value v = o.Get(key);
  if (!v.IsString()) throw Error("internal", std::string("plan: ") + key + " must be a string");
  return v.As<Napi::String>().Utf8Value();
}

double get_number(const Napi::Object &o, const char *key, double fallback) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return fallback;
  if (!v.IsNumber()) throw Error("internal", std::string("plan: ") + key + " must be a number");
  return v.As<Napi::Number>().DoubleValue();
}

double get_ranged(const Napi::Object &o, const char *key, double min, double max, double fallback) {
  double v = get_number(o, key, fallback);
  if (!(v >= min && v <= max)) throw Error("internal", std::string("plan: ") + key + " is out of range");
  return v;
}

// A step's fields on its plan object (steps/operations.h).
class ObjectFields : public PlanFields {
 public:
  explicit ObjectFields(const Napi::Object &o) : o_(o) {}
  bool has(const char *key) const override { return !o_.Get(key).IsUndefined(); }
  std::string text(const char *key) const override { return get_string(o_, key); }
  double number(const char *key, double fallback) const override { return get_number(o_, key, fallback); }
  double number(const char *key, double min, double max, double fallback) const override {
    return get_ranged(o_, key, min, max, fallback);
  }
  bool flag(const char *key, bool fallback) const override {
    Napi::Value v = o_.Get(key);
    return v.IsUndefined() ? fallback : v.ToBoolean().Value();
  }
  std::vector<double> numbers(const char *key, size_t count) const override {
    Napi::Value v = o_.Get(key);
    if (!v.IsArray() || v.As<Napi::Array>().Length() != count)
      throw Error("internal", std::string("plan: ") + key + " must have " + std::to_string(count) + " values");
    std::vector<double> out;
    for (uint32_t i = 0; i < count; i++) {
      Napi::Value n = v.As<Napi::Array>().Get(i);
      if (!n.IsNumber()) throw Error("internal", std::string("plan: ") + key + " must be numbers");
      out.push_back(n.As<Napi::Number>().DoubleValue());
    }
    return out;
  }

 private:
  const Napi::Object &o_;
};

Step to_step(const Napi::Object &o, int index) {
  std::string name = get_string(o, "op");
  const Operation *row = operation_named(name);
  if (!row) throw Error("internal", "plan: unknown operation " + name);
  Step step;
  step.op = row->op;
  step.index = index;
  if (row->read) row->read(ObjectFields(o), step);
  return step;
}

const char *format_name(Format format) {
  switch (format) {
    case Format::Png: return "png";
    case Format::Webp: return "webp";
    case Format::Jpeg: return "jpeg";
    case Format::Gif: return "gif";
    case Format::Avif: return "avif";
  }
  return "png";
}

Plan to_plan(const Napi::Object &o) {
  Plan plan;
  Napi::Value steps = o.Get("steps");
  if (!steps.IsArray()) throw Error("internal", "plan: steps must be an array");
  Napi::Array array = steps.As<Napi::Array>();
  for (uint32_t i = 0; i < array.Length(); i++) {
    Napi::Value step = array.Get(i);
    if (!step.IsObject()) throw Error("internal", "plan: a step must be an object");
    plan.steps.push_back(to_step(step.As<Napi::Object>(), int(i)));
  }
  std::string format = get_string(o, "format");
  if (format == "png") plan.format = Format::Png;
  else if (format == "webp") plan.format = Format::Webp;
  else if (format == "jpeg") plan.format = Format::Jpeg;
  else if (format == "gif") plan.format = Format::Gif;
  else if (format == "avif") plan.format = Format::Avif;
  else if (format == "auto") plan.auto_format = true;
  else throw Error("internal", "plan: unknown format " + format);
  // Not given: the output format's default (save.cc).
  plan.quality = o.Get("quality").IsUndefined() ? 0 : int(get_ranged(o, "quality", kQuality.min, kQuality.max, 0));
  plan.anim = o.Get("anim").ToBoolean();
  plan.limits.max_pixels = uint64_t(get_ranged(o, "maxPixels", kMaxPixels.min, kMaxPixels.max, kMaxPixels.fallback));
  plan.limits.max_frames = int(get_ranged(o, "maxFrames", kMaxFrames.min, kMaxFrames.max, kMaxFrames.fallback));
  plan.limits.max_matte_frames =
      int(get_ranged(o, "maxMatteFrames", kMaxMatteFrames.min, kMaxMatteFrames.max, kMaxMatteFrames.fallback));
  plan.timeout_ms = int64_t(get_ranged(o, "timeoutMs", 0, 1e12, 0));
  return plan;
}

// ---- run ---------------------------------------------------------------------------------

using BudgetPtr = std::shared_ptr<Budget>;

class RunWorker : public Worker {
 public:
  RunWorker(Napi::Env env, Napi::Buffer<uint8_t> input, const Napi::Object &plan, ModelPtr model, BudgetPtr budget)
      : Worker(env), input_(Napi::Persistent(input)), data_(input.Data()), size_(input.Length()),
        plan_(to_plan(plan)), model_(std::move(model)), budget_(std::move(budget)) {
    take_matte(plan);
    take_background(plan);
  }

 protected:
  void Work() override {
    // The clock starts when a thread picks the job up, not while it waits for one.
    budget_->start(plan_.timeout_ms);
    struct Finish {
      Budget &budget;
      ~Finish() { budget.finish(); }
    } finish{*budget_};
    out_ = run(data_, size_, plan_, model_.get(), *budget_);
  }

  Napi::Value Result(Napi::Env env) override {
    Napi::Object result = Napi::Object::New(env);
    // The encoded bytes go to JS without a copy; the finaliser frees them.
    auto buffer = Napi::Buffer<uint8_t>::New(env, static_cast<uint8_t *>(out_.data), out_.size,
                                             [](Napi::Env, uint8_t *data) { g_free(data); });
    out_.data = nullptr;
    result.Set("data", buffer);
    result.Set("width", out_.width);
    result.Set("height", out_.height);
    result.Set("frames", out_.frames);
    result.Set("format", format_name(out_.format));
    if (out_.foreground) {
      Napi::Object box = Napi::Object::New(env);
      box.Set("left", out_.foreground->left);
      box.Set("top", out_.foreground->top);
      box.Set("width", out_.foreground->width);
      box.Set("height", out_.foreground->height);
      result.Set("foreground", box);
    }
    Napi::Array computed = Napi::Array::New(env), used = Napi::Array::New(env);
    for (size_t i = 0; i < mattes_.size(); i++) {
      const MatteHandover &handover = *mattes_[i];
      if (handover.used_given) used.Set(used.Length(), matte_steps_[i]);
      if (!handover.computed.get_image()) continue;
      // The matte goes to JS without a copy too: the Buffer holds a reference to its image.
      auto *image = new vips::VImage(handover.computed);
      auto *pixels = static_cast<uint8_t *>(const_cast<void *>(image->data()));
      Napi::Object matte = Napi::Object::New(env);
      matte.Set("step", matte_steps_[i]);
      matte.Set("data", Napi::Buffer<uint8_t>::New(env, pixels, size_t(image->width()) * image->height(),
                                                   [](Napi::Env, uint8_t *, vips::VImage *kept) { delete kept; }, image));
      matte.Set("width", image->width());
      matte.Set("height", image->height());
      computed.Set(computed.Length(), matte);
    }
    if (computed.Length()) result.Set("mattes", computed);
    if (used.Length()) result.Set("mattesGiven", used);
    return result;
  }

  ~RunWorker() override {
    if (out_.data) g_free(out_.data);
  }

 private:
  // plan.mattes (lib/matte-cache.ts): the steps whose matte is handed back once computed
  // (removeBackground, a resize's subject gravity), each with the matte computed before, if any.
  void take_matte(const Napi::Object &plan) {
    Napi::Value list = plan.Get("mattes");
    if (list.IsUndefined()) return;
    if (!list.IsArray()) throw Error("internal", "plan: mattes must be an array");
    Napi::Array array = list.As<Napi::Array>();
    for (uint32_t i = 0; i < array.Length(); i++) {
      if (!array.Get(i).IsObject()) throw Error("internal", "plan: a matte must be an object");
      Napi::Object o = array.Get(i).As<Napi::Object>();
      const int index = int(get_ranged(o, "step", 0, double(plan_.steps.size()) - 1, -1));
      Step &step = plan_.steps[size_t(index)];
      if (step.matte || (step.op != Op::RemoveBackground && step.op != Op::Resize))
        throw Error("internal", "plan: a matte for a step that has none, or twice");
      auto handover = std::make_unique<MatteHandover>();
      handover->want = true;
      Napi::Value given = o.Get("data");
      if (!given.IsUndefined()) {
        if (!given.IsBuffer()) throw Error("internal", "plan: a matte's data must be a Buffer");
        Napi::Buffer<uint8_t> data = given.As<Napi::Buffer<uint8_t>>();
        int width = int(get_ranged(o, "width", 1, VIPS_MAX_COORD, 0));
        int height = int(get_ranged(o, "height", 1, VIPS_MAX_COORD, 0));
        if (data.Length() != size_t(width) * size_t(height)) throw Error("internal", "plan: a matte's data must hold width x height bytes");
        given_.push_back(Napi::Persistent(data));
        handover->given = data.Data();
        handover->given_width = width;
        handover->given_height = height;
      }
      step.matte = handover.get();
      mattes_.push_back(std::move(handover));
      matte_steps_.push_back(index);
    }
  }

  // plan.backgroundImage: the second input of a backgroundImage step, kept alive for the job.
  void take_background(const Napi::Object &plan) {
    Napi::Value given = plan.Get("backgroundImage");
    if (given.IsUndefined()) return;
    if (!given.IsBuffer()) throw Error("internal", "plan: backgroundImage must be a Buffer");
    Napi::Buffer<uint8_t> data = given.As<Napi::Buffer<uint8_t>>();
    background_ = Napi::Persistent(data);
    // An empty Buffer may have no data pointer: it is still given (and refused as empty by the loader).
    static const uint8_t kNothing = 0;
    plan_.background = data.Length() ? data.Data() : &kNothing;
    plan_.background_size = data.Length();
  }

  Napi::Reference<Napi::Buffer<uint8_t>> input_;  // keeps the input alive for the job
  Napi::Reference<Napi::Buffer<uint8_t>> background_;
  std::vector<Napi::Reference<Napi::Buffer<uint8_t>>> given_;  // keeps the given mattes alive for the job
  std::vector<std::unique_ptr<MatteHandover>> mattes_;  // one a step that asked (stable addresses: Step::matte)
  std::vector<int> matte_steps_;
  const uint8_t *data_;
  size_t size_;
  Plan plan_;
  ModelPtr model_;
  BudgetPtr budget_;  // shared with the JS handle from createJob(), which may cancel it
  Encoded out_{nullptr, 0, 0, 0, 0, Format::Png, std::nullopt};
};

// A job handle: created before run() so that JS can cancel the job whatever state it is in.
BudgetPtr budget_from(const Napi::Value &value) {
  if (value.IsUndefined() || value.IsNull()) return std::make_shared<Budget>();
  if (!value.IsExternal()) throw Error("internal", "job must be a handle from createJob");
  return *value.As<Napi::External<BudgetPtr>>().Data();
}

Napi::Value CreateJob(const Napi::CallbackInfo &info) {
  return Napi::External<BudgetPtr>::New(info.Env(), new BudgetPtr(std::make_shared<Budget>()),
                                        [](Napi::Env, BudgetPtr *p) { delete p; });
}

// cancel(job): stops the job (inside libvips or ONNX Runtime, within a tile or an operator);
// returns whether it had started (false: it was still waiting for a thread and will not run).
Napi::Value Cancel(const Napi::CallbackInfo &info) {
  if (!info[0].IsExternal()) throw Napi::TypeError::New(info.Env(), "cancel needs a handle from createJob");
  return Napi::Boolean::New(info.Env(), (*info[0].As<Napi::External<BudgetPtr>>().Data())->cancel());
}

Napi::Value Run(const Napi::CallbackInfo &info) {
  return start(info.Env(), [&]() {
    if (!info[0].IsBuffer()) throw Error("internal", "input must be a Buffer");
    if (!info[1].IsObject()) throw Error("internal", "plan must be an object");
    return new RunWorker(info.Env(), info[0].As<Napi::Buffer<uint8_t>>(), info[1].As<Napi::Object>(),
                         model_from(info[2]), budget_from(info[3]));
  });
}

// ---- loadModel ---------------------------------------------------------------------------

class LoadModelWorker : public Worker {
 public:
  LoadModelWorker(Napi::Env env, ModelSpec spec) : Worker(env), spec_(std::move(spec)) {}

 protected:
  void Work() override { model_ = std::make_shared<const Model>(spec_); }
  Napi::Value Result(Napi::Env env) override {
    return Napi::External<ModelPtr>::New(env, new ModelPtr(model_), [](Napi::Env, ModelPtr *p) { delete p; });
  }

 private:
  ModelSpec spec_;
  ModelPtr model_;
};

ModelSpec to_model_spec(const Napi::Object &o) {
  ModelSpec spec;
  spec.path = get_string(o, "path");
  spec.input_width = int(get_ranged(o, "inputWidth", 1, 8192, 320));
  spec.input_height = int(get_ranged(o, "inputHeight", 1, 8192, 320));
  spec.divide = get_number(o, "divide", 0);
  for (const char *key : {"mean", "std"}) {
    Napi::Value v = o.Get(key);
    if (!v.IsArray() || v.As<Napi::Array>().Length() != 3) throw Error("internal", std::string(key) + " needs 3 numbers");
    for (uint32_t i = 0; i < 3; i++) {
      double n = v.As<Napi::Array>().Get(i).ToNumber().DoubleValue();
      (std::string(key) == "mean" ? spec.mean : spec.std)[i] = n;
    }
  }
  for (double s : spec.std)
    if (s == 0) throw Error("internal", "std must not be 0");
  // The matte output by name, or without one by position (outputIndex, default the first).
  if (o.Has("output") && o.Get("output").IsString()) spec.output = get_string(o, "output");
  spec.output_index = int(get_ranged(o, "outputIndex", 0, 1 << 20, 0));
  std::string postprocess = get_string(o, "postprocess");
  if (postprocess == "minmax") spec.postprocess = ModelSpec::Postprocess::MinMax;
  else if (postprocess == "clamp") spec.postprocess = ModelSpec::Postprocess::Clamp;
  else if (postprocess == "sigmoid") spec.postprocess = ModelSpec::Postprocess::Sigmoid;
  else if (postprocess == "sigmoid_minmax") spec.postprocess = ModelSpec::Postprocess::SigmoidMinMax;
  else throw model_error("unknown post-process \"" + postprocess + "\" (one of minmax, clamp, sigmoid, sigmoid_minmax)");
  return spec;
}

Napi::Value LoadModel(const Napi::CallbackInfo &info) {
  return start(info.Env(), [&]() {
    if (!info[0].IsObject()) throw Error("internal", "loadModel needs a spec object");
    return new LoadModelWorker(info.Env(), to_model_spec(info[0].As<Napi::Object>()));
  });
}

// ---- configuration and versions -----------------------------------------------------------

Napi::Value Configure(const Napi::CallbackInfo &info) {
  if (info[0].IsObject()) {
    Napi::Object options = info[0].As<Napi::Object>();
    Napi::Value threads = options.Get("vipsThreads");
    if (threads.IsNumber()) vips_concurrency_set(std::max(1, threads.As<Napi::Number>().Int32Value()));
    Napi::Value onnx = options.Get("onnxThreads");
    if (onnx.IsNumber()) set_onnxruntime_threads(onnx.As<Napi::Number>().Int32Value());
  }
  return info.Env().Undefined();
}

Napi::Object bound(Napi::Env env, const Bound &b) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("min", b.min);
  out.Set("max", b.max);
  out.Set("default", b.fallback);
  return out;
}

// bounds.h, for lib/ (lib/schema.ts, lib/limits.ts).
Napi::Object bounds(Napi::Env env) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("maxResizeSide", kMaxResizeSide);
  out.Set("maxBlurRadius", kMaxBlurRadius);
  out.Set("maxToneFactor", kMaxToneFactor);
  out.Set("maxTrimMarginPixels", kMaxTrimMarginPixels);
  out.Set("maxTrimMarginPercent", kMaxTrimMarginPercent);
  out.Set("minMegapixels", kMinMegapixels);
  out.Set("maxMegapixels", kMaxMegapixels);
  out.Set("maxShadowBlur", kMaxShadowBlur);
  out.Set("maxShadowOffset", kMaxShadowOffset);
  out.Set("minPlaceScale", kMinPlaceScale);
  out.Set("maxPlaceScale", kMaxPlaceScale);
  out.Set("maxPlaceMarginPixels", kMaxPlaceMarginPixels);
  out.Set("maxPlaceMarginPercent", kMaxPlaceMarginPercent);
  out.Set("maxAspectTerm", kMaxAspectTerm);
  out.Set("maxRoiPixels", kMaxRoiPixels);
  out.Set("minDpr", kMinDpr);
  out.Set("maxDpr", kMaxDpr);
  out.Set("maxSharpenSigma", kMaxSharpenSigma);
  out.Set("maxSharpenAmount", kMaxSharpenAmount);
  out.Set("defaultSharpenFlat", kDefaultSharpenFlat);
  out.Set("defaultSharpenJagged", kDefaultSharpenJagged);
  out.Set("minGamma", kMinGamma);
  out.Set("maxGamma", kMaxGamma);
  out.Set("maxEdgePixels", kMaxEdgePixels);
  out.Set("quality", bound(env, kQuality));
  out.Set("avifQuality", kAvifQuality);
  Napi::Object limits = Napi::Object::New(env);
  limits.Set("maxPixels", bound(env, kMaxPixels));
  limits.Set("maxFrames", bound(env, kMaxFrames));
  limits.Set("maxMatteFrames", bound(env, kMaxMatteFrames));
  out.Set("limits", limits);
  out.Set("decodedBytesPerPixel", kDecodedBytesPerPixel);
  return out;
}

Napi::Value Versions(const Napi::CallbackInfo &info) {
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("libvips", vips_version_string());
  try {
    out.Set("onnxruntime", onnxruntime_version());  // opens ONNX Runtime if no model has yet
  } catch (const Error &err) {
    throw to_js_error(info.Env(), err.code, err.what(), err.path);
  }
  return out;
}

}  // namespace

ModelPtr model_from(const Napi::Value &value) {
  if (value.IsUndefined() || value.IsNull()) return nullptr;
  if (!value.IsExternal()) throw Error("internal", "model must be a handle from loadModel");
  return *value.As<Napi::External<ModelPtr>>().Data();
}

Napi::Object init(Napi::Env env, Napi::Object exports) {
  std::string failure = start_libvips();
  if (!failure.empty()) throw Napi::Error::New(env, "matte: " + failure);
  // Every job is a new image: the operation cache would only hold memory (and buffers of
  // finished jobs) for nothing.
  vips_cache_set_max(0);
  // Defence in depth: the loaders are called by name from an allow-list (native/load.cc).
  vips_block_untrusted_set(TRUE);
  // Decoder warnings (a bad ICC chunk, an nclx profile) are about the input, not the service,
  // and a hostile input could flood the log with them: drop them.
  g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING, [](const gchar *, GLogLevelFlags, const gchar *, gpointer) {}, nullptr);
  exports.Set("run", Napi::Function::New(env, Run));
  exports.Set("createJob", Napi::Function::New(env, CreateJob));
  exports.Set("cancel", Napi::Function::New(env, Cancel));
  exports.Set("loadModel", Napi::Function::New(env, LoadModel));
  exports.Set("configure", Napi::Function::New(env, Configure));
  exports.Set("versions", Napi::Function::New(env, Versions));
  exports.Set("counters", Napi::Function::New(env, counters));
  exports.Set("bounds", bounds(env));
  return exports;
}

}  // namespace matte::addon

// The product addon's entry point; the probes build registers its own around addon::init
// (native/probes/probes.cc).
#ifndef MATTE_PROBES
namespace {
Napi::Object Init(Napi::Env env, Napi::Object exports) { return matte::addon::init(env, exports); }
}  // namespace
NODE_API_MODULE(matte, Init)
#endif
