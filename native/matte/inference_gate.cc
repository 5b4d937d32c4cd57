#include "inference_gate.h"

#include "../budget.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace matte {

namespace {

std::mutex mutex;
std::condition_variable freed;
int limit = 1;
int inside = 0;

}  // namespace

void size_inference_gate(int pool_threads) {
  int cores = std::max(1u, std::thread::hardware_concurrency());
  std::lock_guard<std::mutex> lock(mutex);
  limit = std::max(1, cores / std::max(1, pool_threads));
  freed.notify_all();
}

InferencePlace::InferencePlace(Budget *budget) {
  std::unique_lock<std::mutex> lock(mutex);
  while (inside >= limit) {
    // Woken when a place is freed; every 20 ms the budget is checked (throws the job's error).
    freed.wait_for(lock, std::chrono::milliseconds(20));
    if (budget && inside >= limit) {
      lock.unlock();
      budget->check();
      lock.lock();
    }
  }
  inside++;
}

InferencePlace::~InferencePlace() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    inside--;
  }
  freed.notify_one();
}

}  // namespace matte
