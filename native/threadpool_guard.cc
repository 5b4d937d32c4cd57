// Why: libvips 8.14 ends a threadpool (the threads behind every sink: copy to memory, the savers,
// avg...) in one of two ways. When the work is done, the allocate callback sets the pool's `stop`
// flag under the pool's lock, and every worker sees it there. When something fails (the progress
// callback, as when a job's budget kills the image; a tile's work; an allocation), the pool's
// `error` flag is set, and the thread that runs the pool then sets `stop` without the lock while
// workers may still be between their check of `stop` and vips_worker_allocate's
// `g_assert(!pool->stop)`. Debian's build keeps assertions, so that race aborts the process: every
// job in flight is lost. test/helpers/threadpool-race.cc reproduces it with libvips alone.
//
// The fix: matte wraps the callbacks of every vips_threadpool_run libvips calls. A failure is
// recorded instead of returned, the next allocation sets `stop` under the lock as at the end of the
// image, and the run then returns the failure. Every callback of the sink still runs as before (the
// sinks count finished tiles in their work callbacks), so the sink's own bookkeeping is unchanged.
#include "threadpool_guard.h"

#include "libvips_got.h"

#include <vips/vips.h>

#include <atomic>

namespace matte {

namespace {

using ThreadpoolRun = int (*)(VipsImage *, VipsThreadStartFn, VipsThreadpoolAllocateFn, VipsThreadpoolWorkFn,
                              VipsThreadpoolProgressFn, void *);
ThreadpoolRun real_run = nullptr;
bool threadpool_guarded = false;

// One run's callbacks and client data, and whether anything has failed.
struct Callbacks {
  VipsThreadStartFn start;
  VipsThreadpoolAllocateFn allocate;
  VipsThreadpoolWorkFn work;
  VipsThreadpoolProgressFn progress;
  void *a;
  std::atomic<bool> failed{false};
};

VipsThreadState *start_of(VipsImage *image, void *a) {
  auto *run = static_cast<Callbacks *>(a);
  VipsThreadState *state = run->start(image, run->a);
  if (state) return state;
  // A worker without its state would fail the pool the racy way: it gets a plain state instead,
  // which the failed run's allocations never hand to the sink.
  run->failed.store(true);
  return vips_thread_state_new(image, run->a);
}

// Under the pool's lock, like every allocation.
int allocate_of(VipsThreadState *state, void *a, gboolean *stop) {
  auto *run = static_cast<Callbacks *>(a);
  if (!run->failed.load() && run->allocate(state, run->a, stop) == 0) return 0;
  run->failed.store(true);
  *stop = TRUE;
  return 0;
}

int work_of(VipsThreadState *state, void *a) {
  auto *run = static_cast<Callbacks *>(a);
  if (run->work(state, run->a) != 0) run->failed.store(true);
  return 0;
}

int progress_of(void *a) {
  auto *run = static_cast<Callbacks *>(a);
  if (run->progress(run->a) != 0) run->failed.store(true);
  return 0;
}

int guarded_run(VipsImage *image, VipsThreadStartFn start, VipsThreadpoolAllocateFn allocate,
                VipsThreadpoolWorkFn work, VipsThreadpoolProgressFn progress, void *a) {
  Callbacks run{start, allocate, work, progress, a};
  int result = real_run(image, start_of, allocate_of, work_of, progress ? progress_of : nullptr, &run);
  return run.failed.load() ? -1 : result;
}

}  // namespace

bool guard_libvips_threadpool() {
  static const bool result = [] {
    real_run = reinterpret_cast<ThreadpoolRun>(libvips_binding("vips_threadpool_run"));
    threadpool_guarded = real_run && redirect_libvips_calls("vips_threadpool_run", reinterpret_cast<void *>(&guarded_run)) > 0;
    return threadpool_guarded;
  }();
  return result;
}

bool libvips_threadpool_guarded() { return threadpool_guarded; }

}  // namespace matte
