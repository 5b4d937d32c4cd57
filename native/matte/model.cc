#include "model.h"

#include "../budget.h"
#include "../errors.h"
#include "inference_gate.h"
#include "onnxruntime.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>  // malloc_trim, mallopt
#endif

namespace matte {

namespace {

// ONNX Runtime's intra-op threads: one pool for the whole process, shared by every session and
// every concurrent run (sessions are created with DisablePerSessionThreads). A run that is alone
// uses every thread of the pool; runs at the same time share them (inference_gate.h), instead of
// each session owning floor(cores / jobs) threads that sit idle when it runs alone. Sized before
// the first model loads.
std::atomic<int> pool_threads{0};

// The pool's size once it exists (pool_threads, or every core when nothing was set before).
std::atomic<int> pool_size{0};

// How many runs the pool has made (counters(): tests check that runs happened where expected).
std::atomic<int64_t> pooled_runs{0};

Ort::Env &environment() {
  // One environment per process, created on first use and never destroyed (sessions may outlive
  // static destruction order at exit).
  // ONNX Runtime's own log stays quiet: every error reaches the caller as a model_error.
  static Ort::Env *env = [] {
    int threads = pool_threads.load();
    if (threads < 1) threads = std::max(1u, std::thread::hardware_concurrency());
    pool_size = threads;
    size_inference_gate(threads);  // inference_gate.h: how many runs share this pool at once
    Ort::ThreadingOptions threading;
    threading.SetGlobalIntraOpNumThreads(threads);
    threading.SetGlobalInterOpNumThreads(1);
    // Idle pool threads must not spin: jobs and libvips share the cores.
    threading.SetGlobalSpinControl(0);
    auto *created = new Ort::Env(threading, ORT_LOGGING_LEVEL_FATAL, "matte");
    // No telemetry from a self-hosted service: lib/telemetry.ts sets ORT_DISABLE_TELEMETRY before
    // the library loads (the full opt-out); this also covers an addon loaded some other way.
    created->DisableTelemetryEvents();
    return created;
  }();
  return *env;
}

// A model dimension matches the registry's when equal, or when the model leaves it free (-1).
bool fits(int64_t dim, int64_t want) { return dim == want || dim < 0; }

std::string shape_text(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); i++) text += (i ? "x" : "") + std::to_string(shape[i]);
  return text + "]";
}

#if defined(__GLIBC__)
// glibc serves a block from its heaps (main and per-thread arenas) below its mmap threshold, and
// raises that threshold to the size of every mmapped block freed. Once a model's load or a first
// job has freed such blocks, the large image buffers of later jobs (decode, the model-size image,
// the matte, the RGBA result, the refinement's planes) land in the heaps, where they fragment and
// stay resident, job after job. A fixed threshold of 4 MB sends them to mmap, returned to the
// system when freed, at no cost in CPU (bench/README.md, "IS-Net as an fp32 file, and glibc's mmap
// threshold"). Set when the addon loads, before a model's load can raise it. ONNX Runtime's arena
// regions are allocated once per session and are not affected. A fixed mmap threshold also
// freezes glibc's trim threshold at its 128 KB default: every free at a heap's top past 128 KB went
// back to the system, and the next job faulted those pages in again (a 4000x3000 JPEG thumbnail:
// about 1,200 page faults a request through the server). At 32 MB the heaps keep what a job of
// this size frees for the next (bench/README.md, "Thumbnails"). An operator's MALLOC_MMAP_THRESHOLD_
// and MALLOC_TRIM_THRESHOLD_ are left alone.
void fix_malloc_thresholds() {
  if (!std::getenv("MALLOC_MMAP_THRESHOLD_")) mallopt(M_MMAP_THRESHOLD, 4 << 20);
  if (!std::getenv("MALLOC_TRIM_THRESHOLD_")) mallopt(M_TRIM_THRESHOLD, 32 << 20);
}
const bool malloc_thresholds_fixed = (fix_malloc_thresholds(), true);
#endif

}  // namespace

// The registry's post-processing: model output values -> 0..255, read where ONNX Runtime left them.
std::vector<uint8_t> to_matte(const float *values, size_t count, ModelSpec::Postprocess postprocess) {
  const bool sigmoid =
      postprocess == ModelSpec::Postprocess::Sigmoid || postprocess == ModelSpec::Postprocess::SigmoidMinMax;
  auto value = [&](size_t i) {
    float v = values[i];
    // A NaN (a broken model) counts as background rather than reaching the rounding (undefined).
    if (std::isnan(v)) v = 0;
    if (sigmoid) v = 1.0f / (1.0f + std::exp(-v));
    return v;
  };
  float low = 0, high = 1;
  if ((postprocess == ModelSpec::Postprocess::MinMax || postprocess == ModelSpec::Postprocess::SigmoidMinMax) &&
      count > 0) {
    // The first smallest and the last largest, as std::minmax_element picks them.
    float min = value(0), max = min;
    for (size_t i = 1; i < count; i++) {
      float v = value(i);
      if (v < min) min = v;
      if (!(v < max)) max = v;
    }
    low = min;
    high = max > min ? max : min + 1;
    if (!std::isfinite(high - low)) throw model_error("the model's matte output is not finite");
  }
  std::vector<uint8_t> matte(count);
  const float scale = 255.0f / (high - low);
  for (size_t i = 0; i < count; i++) {
    float v = std::clamp((value(i) - low) * scale, 0.0f, 255.0f);
    // std::lround(v) for 0 <= v <= 255, exactly: a float plus 0.5 is exact in double.
    matte[i] = uint8_t(int(double(v) + 0.5));
  }
  return matte;
}

InferenceCounts inference_counts() { return {pooled_runs.load(), pool_size.load()}; }

void set_onnxruntime_threads(int threads) { pool_threads = std::max(1, threads); }

Model::Model(const ModelSpec &spec) : spec_(spec) {
  load_onnxruntime();  // the first model opens the library (onnxruntime.h); throws model_error
  // Every ONNX Runtime call below may throw Ort::Exception (a file that is not a model, an
  // unsupported operator): all of them are model errors, never `internal`.
  try {
    open();
  } catch (const Ort::Exception &err) {
    throw model_error("cannot load the model " + spec.path + ": " + err.what());
  }
}

// The session's settings (its threads are the process-wide pool's: environment()).
static Ort::SessionOptions session_options() {
  Ort::SessionOptions options;
  options.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_ENABLE_ALL);
  // Memory-pattern planning raises a large model's peak memory a lot and runs no faster.
  options.DisableMemPattern();
  // The parallel executor, not for parallelism (the global inter-op pool has 1 thread, so nodes
  // run inline on the calling thread, one after another, as in sequential mode) but for memory:
  // it frees every intermediate tensor back to the arena at its last use, where (our reading of
  // the difference) the sequential plan keeps buffers for reuse by later tensors of the same
  // size, so the arena cannot hand them to others. Same mattes, same CPU, a lower peak
  // (bench/README.md, "IS-Net memory: what was kept").
  options.SetExecutionMode(ORT_PARALLEL);
  // The CPU arena stays on: without it, or shrunk after each run, runs were slower and peaked
  // higher. What it holds between jobs is that peak, which the next job needs again anyway.
  return options;
}

void Model::open() {
  ModelSpec &spec = spec_;
  // One session, in the process-wide pool, for every run: a lone job's run uses every thread of
  // the pool, and runs of jobs that share the cores take turns in it (inference_gate.h).
  //
  // Not a second session with one intra-op thread of its own for runs while every core has a
  // job: its inter-op pool of one thread makes ONNX Runtime fall back to the sequential executor,
  // which costs more CPU than runs taking turns in the pool, and it holds a second run's
  // activations (docs/architecture.md, "Threads").
  Ort::SessionOptions options = session_options();
  options.DisablePerSessionThreads();  // the process-wide pool of environment()
  session_ = std::make_unique<Ort::Session>(environment(), spec.path.c_str(), options);
  // Loading leaves the model's protobuf and the buffers of its conversion (fp16 weights folded to
  // fp32, prepacking) freed but held in glibc's heap, where nothing of the inference reuses them
  // (the arena's regions are large enough to be mmapped apart): given back once, here.
#if defined(__GLIBC__)
  malloc_trim(0);
#endif

  Ort::AllocatorWithDefaultOptions allocator;
  if (session_->GetInputCount() != 1) throw model_error("the model must have exactly one input");
  input_name_ = session_->GetInputNameAllocated(0, allocator).get();
  Ort::TypeInfo input_info = session_->GetInputTypeInfo(0);  // owns what `input` points into
  auto input = input_info.GetTensorTypeAndShapeInfo();
  std::vector<int64_t> shape = input.GetShape();
  if (shape.size() != 4 || !fits(shape[0], 1) || !fits(shape[1], 3) || !fits(shape[2], spec.input_height) ||
      !fits(shape[3], spec.input_width))
    throw model_error("the model's input shape " + shape_text(shape) + " does not match its registry entry [1x3x" +
                      std::to_string(spec.input_height) + "x" + std::to_string(spec.input_width) + "]");
  auto input_type = input.GetElementType();
  if (input_type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT && input_type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16)
    throw model_error("the model's input must be float or float16");
  input_is_half_ = input_type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;

  bool found = false;
  const size_t outputs = session_->GetOutputCount();
  if (spec.output.empty()) {
    if (spec.output_index < 0 || size_t(spec.output_index) >= outputs)
      throw model_error("the model has " + std::to_string(outputs) + " outputs, no output " +
                        std::to_string(spec.output_index));
    spec.output = session_->GetOutputNameAllocated(spec.output_index, allocator).get();
  }
  for (size_t i = 0; i < outputs; i++) {
    if (spec.output != session_->GetOutputNameAllocated(i, allocator).get()) continue;
    found = true;
    Ort::TypeInfo output_info = session_->GetOutputTypeInfo(i);
    auto output = output_info.GetTensorTypeAndShapeInfo();
    auto type = output.GetElementType();
    if (type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT && type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16)
      throw model_error("the model's output \"" + spec.output + "\" must be float or float16");
    output_is_half_ = type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
    // The matte must be one HxW plane of the input size (1xHxW, 1x1xHxW, ...); a dimension left
    // symbolic by the model is checked on each run instead.
    std::vector<int64_t> out_shape = output.GetShape();
    size_t n = out_shape.size();
    if (n < 2 || !fits(out_shape[n - 2], spec.input_height) || !fits(out_shape[n - 1], spec.input_width))
      throw model_error("the model's output \"" + spec.output + "\" has the shape " + shape_text(out_shape) +
                        ", not a " + std::to_string(spec.input_height) + "x" + std::to_string(spec.input_width) +
                        " matte");
  }
  if (!found) throw model_error("the model has no output named \"" + spec.output + "\"");
}

std::vector<uint8_t> Model::infer(std::vector<float> &&chw, Budget *budget) const {
  if (chw.size() != size_t(3) * spec_.input_width * spec_.input_height)
    throw model_error("the model's input has the wrong size");
  return infer([&](float *input) { std::copy(chw.begin(), chw.end(), input); }, budget);
}

std::vector<uint8_t> Model::infer(const std::function<void(float *chw)> &fill, Budget *budget) const {
  try {
    return run(fill, budget);
  } catch (const Ort::Exception &err) {
    // A terminated run fails with "Exiting due to terminate flag": that is the budget's stop.
    if (budget) budget->check();
    throw model_error(std::string("inference failed: ") + err.what());
  }
}

std::vector<uint8_t> Model::run(const std::function<void(float *chw)> &fill, Budget *budget) const {
  const size_t pixels = size_t(spec_.input_width) * spec_.input_height;
  std::array<int64_t, 4> shape{1, 3, spec_.input_height, spec_.input_width};
  Ort::Session &session = *session_;

  // The input tensor comes from the session's arena, whose pages the previous runs left resident:
  // a buffer of the job's own would be fresh, zero-filled pages on every job (glibc maps blocks
  // that large apart: the mmap threshold above), then a copy.
  auto memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  Ort::Allocator arena(session, memory);
  Ort::Value input{nullptr};
  if (input_is_half_) {
    std::vector<float> chw(pixels * 3);
    fill(chw.data());
    input = Ort::Value::CreateTensor<Ort::Float16_t>(arena, shape.data(), shape.size());
    Ort::Float16_t *half = input.GetTensorMutableData<Ort::Float16_t>();
    for (size_t i = 0; i < chw.size(); i++) half[i] = Ort::Float16_t(chw[i]);
  } else {
    input = Ort::Value::CreateTensor<float>(arena, shape.data(), shape.size());
    fill(input.GetTensorMutableData<float>());
  }

  const char *input_names[] = {input_name_.c_str()};
  const char *output_names[] = {spec_.output.c_str()};
  Ort::RunOptions run_options;
  std::vector<Ort::Value> outputs;
  {
    InferencePlace place(budget);  // runs take turns in the pool (inference_gate.h)
    Budget::Inference running(budget, run_options);  // cancel() and the deadline can terminate it
    outputs = session.Run(run_options, input_names, &input, 1, output_names, 1);
    pooled_runs++;
  }
  input = Ort::Value{nullptr};  // back to the arena before the post-processing
  if (outputs.size() != 1 || !outputs[0].IsTensor()) throw model_error("the model gave no matte tensor");
  auto info = outputs[0].GetTensorTypeAndShapeInfo();
  std::vector<int64_t> out_shape = info.GetShape();
  size_t n = out_shape.size();
  if (n < 2 || out_shape[n - 2] != spec_.input_height || out_shape[n - 1] != spec_.input_width ||
      info.GetElementCount() < pixels)
    throw model_error("the model's matte output has the shape " + shape_text(out_shape) + ", not " +
                      std::to_string(spec_.input_height) + "x" + std::to_string(spec_.input_width));

  // The first input_width x input_height values are the matte (of 1x1xHxW or 1xHxW; with more
  // channels, the first, as rembg does).
  if (!output_is_half_) return to_matte(outputs[0].GetTensorData<float>(), pixels, spec_.postprocess);
  std::vector<float> values(pixels);
  const Ort::Float16_t *data = outputs[0].GetTensorData<Ort::Float16_t>();
  for (size_t i = 0; i < pixels; i++) values[i] = data[i].ToFloat();
  return to_matte(values.data(), pixels, spec_.postprocess);
}

}  // namespace matte
