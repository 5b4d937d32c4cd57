// The abort behind native/threadpool_guard.cc, with libvips alone: sinks of several threads whose
// computation fails part-way (the kill flag a job's budget sets, seen by the sink's progress or by
// a tile's work). Unguarded, libvips 8.14 sets the pool's stop flag without its lock while a
// worker may be between its check and vips_worker_allocate's g_assert(!pool->stop): SIGABRT. With
// `guard`, matte's wrapper is put in place first. Every killed round must fail (a killed sink must
// not report success with pixels it did not compute), and a round that is not killed must write the right pixels. Built and run by
// test/engine/threadpool-guard.test.ts:
//
//   threadpool-race [guard|unguarded] CONCURRENCY ROUNDS   prints "threadpool-race: done" unless it aborted
#include "../../native/threadpool_guard.h"

#include <vips/vips.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

struct Kill {
  std::atomic<int> ticks{0};
  std::atomic<bool> fired{false};
  int after = 1;
  VipsImage *target = nullptr;  // the image whose kill flag is set: the sink's own, or its input
};

void on_eval(VipsImage *, VipsProgress *, gpointer data) {
  auto *kill = static_cast<Kill *>(data);
  if (++kill->ticks < kill->after) return;
  vips_image_set_kill(kill->target, TRUE);
  kill->fired = true;
}

// 2000x2000 RGB through a cheap operation, computed into memory; killed after `after` tiles unless 0
// (on a loaded machine the pool may finish before the thread running it has seen that many).
bool round_fails(int after, bool kill_input, double *mean, bool *killed) {
  VipsImage *black = nullptr, *out = nullptr;
  if (vips_black(&black, 2000, 2000, "bands", 3, nullptr) || vips_linear1(black, &out, 1.0, 7.0, nullptr)) {
    std::fprintf(stderr, "threadpool-race: %s\n", vips_error_buffer());
    std::exit(2);
  }
  Kill kill;
  kill.after = after;
  kill.target = kill_input ? black : out;
  if (after > 0) {
    vips_image_set_progress(out, TRUE);
    g_signal_connect(out, "eval", G_CALLBACK(on_eval), &kill);
  }
  size_t size = 0;
  auto *pixels = static_cast<float *>(vips_image_write_to_memory(out, &size));
  const bool failed = pixels == nullptr;
  *killed = kill.fired;
  if (pixels) {
    double sum = 0;
    for (size_t i = 0; i < size / sizeof(float); i++) sum += pixels[i];
    *mean = sum / double(size / sizeof(float));
    g_free(pixels);
  }
  vips_error_clear();
  g_object_unref(out);
  g_object_unref(black);
  return failed;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 4 || (std::strcmp(argv[1], "guard") && std::strcmp(argv[1], "unguarded"))) {
    std::fprintf(stderr, "usage: threadpool-race guard|unguarded CONCURRENCY ROUNDS\n");
    return 2;
  }
  const bool guard = std::strcmp(argv[1], "guard") == 0;
  if (guard && !matte::guard_libvips_threadpool()) {
    std::fprintf(stderr, "threadpool-race: the guard could not be put in place\n");
    return 3;
  }
  if (VIPS_INIT(argv[0])) return 2;
  vips_cache_set_max(0);
  vips_concurrency_set(std::atoi(argv[2]));
  const int rounds = std::atoi(argv[3]);
  int killed_rounds = 0, late_rounds = 0;
  for (int i = 0; i < rounds; i++) {
    double mean = 0;
    bool killed = false;
    const bool failed = round_fails(1 + i % 7, i % 2 == 1, &mean, &killed);
    // A kill that came after the pool had handed out its last tile (the thread that runs it kept
    // off the CPU meanwhile, as on a loaded machine) stops nothing: the round may succeed, but
    // only with every pixel computed.
    if (killed && !failed && mean != 7.0) {
      std::fprintf(stderr, "threadpool-race: round %d was killed and reported success with %g, not 7\n", i, mean);
      return 4;
    }
    killed_rounds += killed && failed;
    late_rounds += killed && !failed;
    if (i % 100 == 0 && (round_fails(0, false, &mean, &killed) || mean != 7.0)) {
      std::fprintf(stderr, "threadpool-race: a round that was not killed failed or wrote %g, not 7\n", mean);
      return 5;
    }
  }
  std::printf("threadpool-race: done (%s, concurrency %s, %d rounds, %d killed, %d killed too late to stop)\n", guard ? "guarded" : "unguarded",
              argv[2], rounds, killed_rounds, late_rounds);
  return 0;
}
