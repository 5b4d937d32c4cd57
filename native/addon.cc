// The N-API surface only: argument conversion, the async workers and error mapping. The work
// itself is pipeline.cc (edit) and matte/model.cc (the model).
#include <napi.h>
#include <vips/vips8>

#include "budget.h"
#include "counters.h"
#include "encode/png_probe.h"
#include "errors.h"
#include "libvips.h"
#include "matte/model.h"
#include "matte/onnxruntime.h"
#include "pipeline.h"

#include <limits>
#include <memory>
#include <string>

namespace {

using matte::Error;
using ModelPtr = std::shared_ptr<const matte::Model>;

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

matte::Step to_step(const Napi::Object &o, int index) {
  matte::Step step;
  step.index = index;
  std::string op = get_string(o, "op");
  if (op == "resize") {
    step.op = matte::Op::Resize;
    step.width = o.Get("width").IsUndefined() ? 0 : int(get_ranged(o, "width", 1, 10000, 0));
    step.height = o.Get("height").IsUndefined() ? 0 : int(get_ranged(o, "height", 1, 10000, 0));
    if (!step.width && !step.height) throw Error("internal", "plan: resize needs width or height");
    std::string fit = get_string(o, "fit");
    if (fit == "contain") step.fit = matte::Fit::Contain;
    else if (fit == "cover") step.fit = matte::Fit::Cover;
    else if (fit == "scale-down") step.fit = matte::Fit::ScaleDown;
    else if (fit == "crop") step.fit = matte::Fit::Crop;
    else throw Error("internal", "plan: unknown fit " + fit);
  } else if (op == "rotate") {
    step.op = matte::Op::Rotate;
    step.angle = int(get_number(o, "angle", 0));
    if (step.angle != 90 && step.angle != 180 && step.angle != 270) throw Error("internal", "plan: bad angle");
  } else if (op == "flip") {
    step.op = matte::Op::Flip;
    std::string direction = get_string(o, "direction");
    step.horizontal = direction.find('h') != std::string::npos;
    step.vertical = direction.find('v') != std::string::npos;
  } else if (op == "blur") {
    step.op = matte::Op::Blur;
    step.value = get_ranged(o, "radius", 0, 250, 0);
  } else if (op == "brightness" || op == "contrast" || op == "saturation") {
    step.op = op == "brightness" ? matte::Op::Brightness : op == "contrast" ? matte::Op::Contrast : matte::Op::Saturation;
    step.value = get_ranged(o, "value", 0, matte::kMaxToneFactor, 1);
  } else if (op == "background") {
    step.op = matte::Op::Background;
    Napi::Value rgba = o.Get("rgba");
    if (!rgba.IsArray() || rgba.As<Napi::Array>().Length() != 4) throw Error("internal", "plan: rgba must have 4 values");
    for (uint32_t i = 0; i < 4; i++) {
      Napi::Value c = rgba.As<Napi::Array>().Get(i);
      if (!c.IsNumber()) throw Error("internal", "plan: rgba must be numbers");
      step.rgba[i] = std::clamp(c.As<Napi::Number>().DoubleValue(), 0.0, 255.0);
    }
  } else if (op == "removeBackground") {
    step.op = matte::Op::RemoveBackground;
    step.refine = o.Get("refine").IsUndefined() || o.Get("refine").ToBoolean();
    step.tta = o.Get("tta").ToBoolean();
  } else if (op == "trim") {
    step.op = matte::Op::Trim;
  } else if (op == "trimTransparent") {
    step.op = matte::Op::TrimTransparent;
    step.margin_percent = !o.Get("marginPercent").IsUndefined();
    step.margin = step.margin_percent ? get_ranged(o, "marginPercent", 0, 50, 0) : get_ranged(o, "marginPixels", 0, 500, 0);
  } else if (op == "extractAlpha") {
    step.op = matte::Op::ExtractAlpha;
  } else {
    throw Error("internal", "plan: unknown operation " + op);
  }
  return step;
}

matte::Plan to_plan(const Napi::Object &o) {
  matte::Plan plan;
  Napi::Value steps = o.Get("steps");
  if (!steps.IsArray()) throw Error("internal", "plan: steps must be an array");
  Napi::Array array = steps.As<Napi::Array>();
  for (uint32_t i = 0; i < array.Length(); i++) {
    Napi::Value step = array.Get(i);
    if (!step.IsObject()) throw Error("internal", "plan: a step must be an object");
    plan.steps.push_back(to_step(step.As<Napi::Object>(), int(i)));
  }
  std::string format = get_string(o, "format");
  if (format == "png") plan.format = matte::Format::Png;
  else if (format == "webp") plan.format = matte::Format::Webp;
  else if (format == "jpeg") plan.format = matte::Format::Jpeg;
  else if (format == "gif") plan.format = matte::Format::Gif;
  else if (format == "avif") plan.format = matte::Format::Avif;
  else throw Error("internal", "plan: unknown format " + format);
  plan.quality = int(get_ranged(o, "quality", 1, 100, 80));
  plan.anim = o.Get("anim").ToBoolean();
  plan.limits.max_pixels = uint64_t(get_ranged(o, "maxPixels", 1, 1e15, 1e8));
  plan.limits.max_frames = int(get_ranged(o, "maxFrames", 1, 1e6, 1000));
  plan.limits.max_matte_frames = int(get_ranged(o, "maxMatteFrames", 1, 1e6, 100));
  plan.timeout_ms = int64_t(get_ranged(o, "timeoutMs", 0, 1e12, 0));
  return plan;
}

Napi::Error to_js_error(Napi::Env env, const std::string &code, const std::string &message, const std::string &path) {
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("code", Napi::String::New(env, code));
  if (!path.empty()) error.Set("path", Napi::String::New(env, path));
  return error;
}

// A worker that turns what Execute throws into a rejected promise carrying `code` and `path`.
class Worker : public Napi::AsyncWorker {
 public:
  explicit Worker(Napi::Env env) : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise promise() { return deferred_.Promise(); }

 protected:
  virtual void Work() = 0;
  virtual Napi::Value Result(Napi::Env env) = 0;

  void Execute() override {
    try {
      Work();
    } catch (const Error &err) {
      fail(err.code, err.what(), err.path);
    } catch (const vips::VError &) {
      // libvips' error text is process-wide (it may be another job's): never this job's message.
      vips_error_clear();
      fail("internal", "image processing failed", "");
    } catch (const std::bad_alloc &) {
      fail("internal", "out of memory", "");
    } catch (const std::exception &err) {
      fail("internal", err.what(), "");
    }
  }
  void OnOK() override { deferred_.Resolve(Result(Env())); }
  void OnError(const Napi::Error &) override {
    deferred_.Reject(to_js_error(Env(), code_, message_, path_).Value());
  }

 private:
  void fail(const std::string &code, const std::string &message, const std::string &path) {
    code_ = code;
    message_ = message;
    path_ = path;
    SetError(message);
  }
  Napi::Promise::Deferred deferred_;
  std::string code_, message_, path_;
};

// Queues the worker that make() builds and returns its promise; an argument error thrown while
// building it becomes a rejected promise too, so JS always gets a Promise.
template <typename Make>
Napi::Value start(Napi::Env env, Make make) {
  try {
    Worker *worker = make();
    Napi::Promise promise = worker->promise();
    worker->Queue();
    return promise;
  } catch (const Error &err) {
    auto deferred = Napi::Promise::Deferred::New(env);
    deferred.Reject(to_js_error(env, err.code, err.what(), err.path).Value());
    return deferred.Promise();
  }
}

// ---- run ---------------------------------------------------------------------------------

using BudgetPtr = std::shared_ptr<matte::Budget>;

class RunWorker : public Worker {
 public:
  RunWorker(Napi::Env env, Napi::Buffer<uint8_t> input, const Napi::Object &plan, ModelPtr model, BudgetPtr budget)
      : Worker(env), input_(Napi::Persistent(input)), data_(input.Data()), size_(input.Length()),
        plan_(to_plan(plan)), model_(std::move(model)), budget_(std::move(budget)) {
    take_matte(plan);
  }

 protected:
  void Work() override {
    // The clock starts when a thread picks the job up, not while it waits for one.
    budget_->start(plan_.timeout_ms);
    struct Finish {
      matte::Budget &budget;
      ~Finish() { budget.finish(); }
    } finish{*budget_};
    out_ = matte::run(data_, size_, plan_, model_.get(), *budget_);
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
    if (matte_.used_given) result.Set("matteGiven", true);
    if (matte_.computed.get_image()) {
      // The matte goes to JS without a copy too: the Buffer holds a reference to its image.
      auto *image = new vips::VImage(matte_.computed);
      auto *pixels = static_cast<uint8_t *>(const_cast<void *>(image->data()));
      Napi::Object matte = Napi::Object::New(env);
      matte.Set("data", Napi::Buffer<uint8_t>::New(env, pixels, size_t(image->width()) * image->height(),
                                                   [](Napi::Env, uint8_t *, vips::VImage *kept) { delete kept; }, image));
      matte.Set("width", image->width());
      matte.Set("height", image->height());
      result.Set("matte", matte);
    }
    return result;
  }

  ~RunWorker() override {
    if (out_.data) g_free(out_.data);
  }

 private:
  // plan.matte (a matte computed before) and plan.handBackMatte: lib/matte-cache.ts.
  void take_matte(const Napi::Object &plan) {
    matte_.want = plan.Get("handBackMatte").ToBoolean();
    Napi::Value given = plan.Get("matte");
    if (given.IsObject()) {
      Napi::Object o = given.As<Napi::Object>();
      if (!o.Get("data").IsBuffer()) throw Error("internal", "plan: matte.data must be a Buffer");
      Napi::Buffer<uint8_t> data = o.Get("data").As<Napi::Buffer<uint8_t>>();
      int width = int(get_ranged(o, "width", 1, VIPS_MAX_COORD, 0));
      int height = int(get_ranged(o, "height", 1, VIPS_MAX_COORD, 0));
      if (data.Length() != size_t(width) * size_t(height)) throw Error("internal", "plan: matte.data must hold width x height bytes");
      given_ = Napi::Persistent(data);
      matte_.given = data.Data();
      matte_.given_width = width;
      matte_.given_height = height;
    }
    if (!matte_.want && !matte_.given) return;
    for (matte::Step &step : plan_.steps)
      if (step.op == matte::Op::RemoveBackground) step.matte = &matte_;
  }

  Napi::Reference<Napi::Buffer<uint8_t>> input_;  // keeps the input alive for the job
  Napi::Reference<Napi::Buffer<uint8_t>> given_;  // keeps a given matte alive for the job
  matte::MatteHandover matte_;
  const uint8_t *data_;
  size_t size_;
  matte::Plan plan_;
  ModelPtr model_;
  BudgetPtr budget_;  // shared with the JS handle from createJob(), which may cancel it
  matte::Encoded out_{nullptr, 0, 0, 0, 0};
};

// A job handle: created before run() so that JS can cancel the job whatever state it is in.
BudgetPtr budget_from(const Napi::Value &value) {
  if (value.IsUndefined() || value.IsNull()) return std::make_shared<matte::Budget>();
  if (!value.IsExternal()) throw Error("internal", "job must be a handle from createJob");
  return *value.As<Napi::External<BudgetPtr>>().Data();
}

Napi::Value CreateJob(const Napi::CallbackInfo &info) {
  return Napi::External<BudgetPtr>::New(info.Env(), new BudgetPtr(std::make_shared<matte::Budget>()),
                                        [](Napi::Env, BudgetPtr *p) { delete p; });
}

// cancel(job): stops the job (inside libvips or ONNX Runtime, within a tile or an operator);
// returns whether it had started (false: it was still waiting for a thread and will not run).
Napi::Value Cancel(const Napi::CallbackInfo &info) {
  if (!info[0].IsExternal()) throw Napi::TypeError::New(info.Env(), "cancel needs a handle from createJob");
  return Napi::Boolean::New(info.Env(), (*info[0].As<Napi::External<BudgetPtr>>().Data())->cancel());
}

ModelPtr model_from(const Napi::Value &value) {
  if (value.IsUndefined() || value.IsNull()) return nullptr;
  if (!value.IsExternal()) throw Error("internal", "model must be a handle from loadModel");
  return *value.As<Napi::External<ModelPtr>>().Data();
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
  LoadModelWorker(Napi::Env env, matte::ModelSpec spec) : Worker(env), spec_(std::move(spec)) {}

 protected:
  void Work() override { model_ = std::make_shared<const matte::Model>(spec_); }
  Napi::Value Result(Napi::Env env) override {
    return Napi::External<ModelPtr>::New(env, new ModelPtr(model_), [](Napi::Env, ModelPtr *p) { delete p; });
  }

 private:
  matte::ModelSpec spec_;
  ModelPtr model_;
};

matte::ModelSpec to_model_spec(const Napi::Object &o) {
  matte::ModelSpec spec;
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
  if (postprocess == "minmax") spec.postprocess = matte::ModelSpec::Postprocess::MinMax;
  else if (postprocess == "clamp") spec.postprocess = matte::ModelSpec::Postprocess::Clamp;
  else if (postprocess == "sigmoid") spec.postprocess = matte::ModelSpec::Postprocess::Sigmoid;
  else if (postprocess == "sigmoid_minmax") spec.postprocess = matte::ModelSpec::Postprocess::SigmoidMinMax;
  else throw matte::model_error("unknown post-process \"" + postprocess + "\" (one of minmax, clamp, sigmoid, sigmoid_minmax)");
  return spec;
}

Napi::Value LoadModel(const Napi::CallbackInfo &info) {
  return start(info.Env(), [&]() {
    if (!info[0].IsObject()) throw Error("internal", "loadModel needs a spec object");
    return new LoadModelWorker(info.Env(), to_model_spec(info[0].As<Napi::Object>()));
  });
}

// ---- infer: the model alone on a planar float tensor (benchmarks and tests) -----------------

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

// ---- configuration and versions -----------------------------------------------------------

Napi::Value Configure(const Napi::CallbackInfo &info) {
  if (info[0].IsObject()) {
    Napi::Object options = info[0].As<Napi::Object>();
    Napi::Value threads = options.Get("vipsThreads");
    if (threads.IsNumber()) vips_concurrency_set(std::max(1, threads.As<Napi::Number>().Int32Value()));
    Napi::Value onnx = options.Get("onnxThreads");
    if (onnx.IsNumber()) matte::set_onnxruntime_threads(onnx.As<Napi::Number>().Int32Value());
  }
  return info.Env().Undefined();
}

Napi::Value Versions(const Napi::CallbackInfo &info) {
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("libvips", vips_version_string());
  try {
    out.Set("onnxruntime", matte::onnxruntime_version());  // opens ONNX Runtime if no model has yet
  } catch (const Error &err) {
    throw to_js_error(info.Env(), err.code, err.what(), err.path);
  }
  return out;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  std::string failure = matte::start_libvips();
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
  exports.Set("infer", Napi::Function::New(env, Infer));
  exports.Set("configure", Napi::Function::New(env, Configure));
  exports.Set("versions", Napi::Function::New(env, Versions));
  exports.Set("counters", Napi::Function::New(env, matte::counters));
  exports.Set("encodePng", Napi::Function::New(env, matte::encode_png_probe));
  return exports;
}

}  // namespace

NODE_API_MODULE(matte, Init)
