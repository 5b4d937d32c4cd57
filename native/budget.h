// The time budget and cancellation of one job (docs/api.md, "Capacity and shutdown").
//
// A Budget is created with the job (addon.cc) and shared by the JS handle that can cancel it and
// the worker that runs it. It stops the job where the time goes:
//  - inside libvips: every image of the job signals progress ("eval", once per tile computed by a
//    sink: copy_memory, the encoders, avg/min/find_trim...); past the deadline or after cancel()
//    the handler sets the kill flag of the image being computed, the sink fails at its next
//    tile, and the VError unwinds the job (its VImages are released on the way);
//  - inside ONNX Runtime: the RunOptions of the running inference are terminated from the thread
//    that cancels (or from the deadline's watchdog), since a Run gives no callback;
//  - between steps and in our own loops: check() throws.
// Whichever way it stops, the job fails with matte::Error `job_timeout` or `aborted`.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include <vips/vips8>

namespace Ort {
struct RunOptions;
}

namespace matte {

struct Error;
struct Frames;

class Budget {
 public:
  enum class Stop : int { None = 0, Timeout = 1, Aborted = 2 };
  struct Shared;  // what the libvips signal handlers hold (budget.cc): it may outlive the Budget

  Budget();
  ~Budget();
  Budget(const Budget &) = delete;
  Budget &operator=(const Budget &) = delete;

  /**
   * Starts the clock when the job starts running (time spent waiting for a thread does not
   * count). `timeout_ms` <= 0: no deadline (the job can still be cancelled).
   */
  void start(int64_t timeout_ms);
  /** Marks the end of the job: a watchdog still waiting for the deadline leaves. */
  void finish();

  /**
   * Stops the job from any thread (the client went away, an AbortSignal, shutdown). Returns
   * whether the job had already started: a job still waiting for a thread never runs.
   */
  bool cancel();

  /** Why the job must stop, if it must; a deadline passed is noticed here too. */
  Stop stopped();
  /** Throws the job's Error when it must stop. */
  void check();
  /** The Error for a stopped job (job_timeout with the number of seconds, or aborted). */
  Error error() const;

  /** Makes every frame signal its computation to this budget (idempotent per image). */
  void watch(Frames &frames);
  void watch(const vips::VImage &image);

  /** Registers the RunOptions of an inference for as long as it lives, so cancel() can end it. */
  class Inference {
   public:
    Inference(Budget *budget, Ort::RunOptions &options);
    ~Inference();

   private:
    Budget *budget_;
  };

 private:
  void stop(Stop why);
  void watchdog();

  int64_t timeout_ms_ = 0;
  std::shared_ptr<Shared> shared_;
  std::mutex mutex_;  // guards run_options_, finished_
  std::condition_variable wake_;
  Ort::RunOptions *run_options_ = nullptr;
  bool finished_ = false;
  std::atomic<bool> started_{false};
  std::thread watchdog_;
};

}  // namespace matte
