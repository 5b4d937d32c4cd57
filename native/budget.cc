#include "budget.h"

#include "errors.h"
#include "frames.h"

#include <onnxruntime_cxx_api.h>

#include <cstdio>
#include <string>

namespace matte {

using Clock = std::chrono::steady_clock;

// The state the libvips "eval" handlers read. An image of the job may be released after the
// Budget (the encoded result never holds one, but nothing forces the order), so each handler owns
// a reference to this, not to the Budget.
struct Budget::Shared {
  std::atomic<int> stop{int(Stop::None)};
  // Nanoseconds on the steady clock; INT64_MAX: no deadline (yet).
  std::atomic<int64_t> deadline{INT64_MAX};

  Stop poll() {
    int now = stop.load(std::memory_order_relaxed);
    if (now != int(Stop::None)) return Stop(now);
    if (Clock::now().time_since_epoch().count() < deadline.load(std::memory_order_relaxed)) return Stop::None;
    int expected = int(Stop::None);
    stop.compare_exchange_strong(expected, int(Stop::Timeout));
    return Stop(stop.load());
  }
};

namespace {

// Emitted by a libvips sink (on the thread that runs it) once per tile, on the image the job
// watches; `progress->im` is the image being computed. Its kill flag makes the sink fail before
// the next tile; the watched image's flag makes any region of it fail too.
void on_eval(VipsImage *image, VipsProgress *progress, gpointer data) {
  auto *shared = static_cast<std::shared_ptr<Budget::Shared> *>(data);
  if ((*shared)->poll() == Budget::Stop::None) return;
  if (progress && progress->im) vips_image_set_kill(progress->im, TRUE);
  vips_image_set_kill(image, TRUE);
}

void release_handler_data(gpointer data, GClosure *) { delete static_cast<std::shared_ptr<Budget::Shared> *>(data); }

std::string seconds_text(int64_t ms) {
  if (ms % 1000 == 0) return std::to_string(ms / 1000);
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", double(ms) / 1000);
  return text;
}

}  // namespace

Budget::Budget() : shared_(std::make_shared<Shared>()) {}

Budget::~Budget() {
  finish();
  if (watchdog_.joinable()) watchdog_.join();
}

void Budget::start(int64_t timeout_ms) {
  timeout_ms_ = timeout_ms;
  if (timeout_ms > 0) {
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    shared_->deadline.store(deadline.time_since_epoch().count());
  }
  started_.store(true);
}

void Budget::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  finished_ = true;
  wake_.notify_all();
}

bool Budget::cancel() {
  stop(Stop::Aborted);
  return started_.load();
}

Budget::Stop Budget::stopped() { return shared_->poll(); }

void Budget::check() {
  if (stopped() != Stop::None) throw error();
}

Error Budget::error() const {
  if (Stop(shared_->stop.load()) == Stop::Timeout)
    return Error("job_timeout", "the job took longer than " + seconds_text(timeout_ms_) + " s and was stopped");
  return Error("aborted", "the job was aborted");
}

void Budget::stop(Stop why) {
  int expected = int(Stop::None);
  shared_->stop.compare_exchange_strong(expected, int(why));
  std::lock_guard<std::mutex> lock(mutex_);
  if (run_options_) run_options_->SetTerminate();
}

void Budget::watch(Frames &frames) {
  for (const vips::VImage &image : frames.images) watch(image);
}

void Budget::watch(const vips::VImage &image) {
  VipsImage *raw = image.get_image();
  // An image built from a watched one signals on that one already (libvips hands progress_signal
  // downstream); a materialised copy does not (libvips breaks the link), so it is watched anew.
  if (!raw || raw->progress_signal) return;
  vips_image_set_progress(raw, TRUE);
  g_signal_connect_data(raw, "eval", G_CALLBACK(on_eval), new std::shared_ptr<Shared>(shared_), release_handler_data,
                        GConnectFlags(0));
}

// ONNX Runtime gives no callback during a run: past the deadline, this thread terminates it.
void Budget::watchdog() {
  std::unique_lock<std::mutex> lock(mutex_);
  auto deadline = Clock::time_point(Clock::duration(shared_->deadline.load()));
  if (wake_.wait_until(lock, deadline, [this] { return finished_; })) return;
  lock.unlock();
  shared_->poll();  // the deadline has passed: marks the timeout
  stop(Stop::Timeout);
}

Budget::Inference::Inference(Budget *budget, Ort::RunOptions &options) : budget_(budget) {
  if (!budget_) return;
  std::lock_guard<std::mutex> lock(budget_->mutex_);
  budget_->run_options_ = &options;
  // A stop that came before the run started: the run ends at once.
  if (budget_->shared_->poll() != Stop::None) options.SetTerminate();
  // The watchdog is started by the first inference only: edits without a model need no thread.
  if (!budget_->watchdog_.joinable() && budget_->timeout_ms_ > 0 && !budget_->finished_)
    budget_->watchdog_ = std::thread([b = budget_] { b->watchdog(); });
}

Budget::Inference::~Inference() {
  if (!budget_) return;
  std::lock_guard<std::mutex> lock(budget_->mutex_);
  budget_->run_options_ = nullptr;
}

}  // namespace matte
