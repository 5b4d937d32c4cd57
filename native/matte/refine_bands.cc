#include "refine_bands.h"

#include "../budget.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include <vips/vips.h>

namespace matte {

namespace {

// Rows a band: small enough that the threads share the work evenly although it gathers along the
// subject's outline, and that a stopped job stops soon; large enough that taking a band (an
// atomic increment and a clock read) costs nothing beside it (a 12 MP image: ~190 bands).
constexpr int kRefineBandRows = 16;

}  // namespace

void for_row_bands(int rows, const std::function<void(int, int)> &body, Budget *budget) {
  for_bands(rows, kRefineBandRows, body, budget);
}

void for_bands(int count, int per_band, const std::function<void(int, int)> &body, Budget *budget) {
  if (count <= 0) return;
  per_band = std::max(1, per_band);
  const int bands = (count + per_band - 1) / per_band;
  const int threads = std::clamp(vips_concurrency_get(), 1, bands);
  std::atomic<int> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    try {
      for (;;) {
        if (stop.load(std::memory_order_relaxed)) return;
        if (budget && budget->stopped() != Budget::Stop::None) {
          stop.store(true);
          return;
        }
        const int band = next.fetch_add(1);
        if (band >= bands) return;
        const int first = band * per_band;
        body(first, std::min(count, first + per_band));
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      stop.store(true);
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(threads - 1);
  try {
    for (int t = 1; t < threads; t++) helpers.emplace_back(work);
  } catch (const std::system_error &) {
    // No thread to be had (a host at its limit): the bands run on the threads that started.
  }
  work();
  for (std::thread &helper : helpers) helper.join();
  if (failure) std::rethrow_exception(failure);
  if (budget) budget->check();
}

}  // namespace matte
