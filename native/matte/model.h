// A segmentation model run in-process by ONNX Runtime (its C API, through the header-only C++
// wrapper that ships with it; the library itself is opened by the first model: onnxruntime.h). One Model is loaded once and shared by every job: ONNX Runtime
// sessions are safe to run concurrently.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace matte {

class Budget;

/** A models/registry.json entry, as the addon needs it (see lib/models.ts). */
struct ModelSpec {
  std::string path;
  int input_width = 320;
  int input_height = 320;
  // x' = (x / divide - mean) / std per channel for x in 0..255; divide 0: the image's max value.
  double divide = 0;
  std::array<double, 3> mean{};
  std::array<double, 3> std{1, 1, 1};
  std::string output;   // the output holding the matte (the others are never computed into JS)
  // Without a name, the output at this position (rembg's sessions read the first); open() then
  // sets `output` to its name.
  int output_index = 0;
  // How the output becomes 0..1: rescaled by its own min and max; clamped; the logistic function
  // of logits, then clamped; or the logistic function and then min-max (rembg's BiRefNet session).
  enum class Postprocess { MinMax, Clamp, Sigmoid, SigmoidMinMax } postprocess = Postprocess::MinMax;
};

class Model {
 public:
  /** Loads and checks the model; throws matte::Error `model_error`. */
  explicit Model(const ModelSpec &spec);

  const ModelSpec &spec() const { return spec_; }

  /**
   * Runs the model on a planar (CHW) float image of the input size and returns the matte,
   * post-processed to 0..255, input_width x input_height bytes. A `budget` that stops terminates
   * the run inside ONNX Runtime; the job's error (job_timeout, aborted) is thrown then.
   */
  std::vector<uint8_t> infer(std::vector<float> &&chw, Budget *budget = nullptr) const;

  /**
   * The same, with `fill` writing the planar input (3 x input_height x input_width floats) straight
   * into the input tensor, which comes from the session's arena: no buffer of the job's own.
   */
  std::vector<uint8_t> infer(const std::function<void(float *chw)> &fill, Budget *budget = nullptr) const;

 private:
  void open();
  std::vector<uint8_t> run(const std::function<void(float *chw)> &fill, Budget *budget) const;

  ModelSpec spec_;
  std::unique_ptr<Ort::Session> session_;  // in the process-wide intra-op pool
  std::string input_name_;
  bool input_is_half_ = false;
  bool output_is_half_ = false;
};

/**
 * Sizes ONNX Runtime's process-wide intra-op thread pool (default: every core). Only a call made
 * before the first model is loaded has an effect: the pool is created with the first session.
 */
void set_onnxruntime_threads(int threads);

/** Inferences run so far in the shared pool (for tests and the bench). */
struct InferenceCounts {
  int64_t pooled = 0;
  /** Threads of ONNX Runtime's shared pool, 0 until the first model has loaded. */
  int pool_threads = 0;
};
InferenceCounts inference_counts();

/** The registry's post-processing of the matte output (values: the first HxW plane, `count` of them). */
std::vector<uint8_t> to_matte(const float *values, size_t count, ModelSpec::Postprocess postprocess);

}  // namespace matte
