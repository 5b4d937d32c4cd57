// The crash behind issue 11 (test/engine/error-isolation died with SIGSEGV once under ASan), reduced
// to libvips alone: threads that each build an integer convolution (libvips 8.14's convi compiles
// ORC programs, under libvips' global lock) and drop it (its dispose frees them, under no lock:
// liborc 0.4.33's orc_code_chunk_free then races on its list of code chunks). With `guard`, matte's
// fix (native/orc_guard.cc) is put in place first. Built and run by test/engine/orc-guard.test.ts:
//
//   orc-race [guard|unguarded] THREADS ROUNDS     prints "orc-race: done" unless it crashed
#include "../../native/orc_guard.h"

#include <vips/vips.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

void blur_rounds(int rounds) {
  for (int i = 0; i < rounds; i++) {
    VipsImage *base = nullptr, *image = nullptr, *mask = nullptr, *out = nullptr;
    double mean = 0;
    // 8-bit input and an integer mask: the convolution libvips compiles to ORC.
    if (vips_black(&base, 24, 16, "bands", 3, nullptr) || vips_cast_uchar(base, &image, nullptr) ||
        vips_gaussmat(&mask, 1.0, 0.2, "precision", VIPS_PRECISION_INTEGER, nullptr) ||
        vips_conv(image, &out, mask, "precision", VIPS_PRECISION_INTEGER, nullptr) || vips_avg(out, &mean, nullptr)) {
      std::fprintf(stderr, "orc-race: %s\n", vips_error_buffer());
      std::exit(2);
    }
    g_object_unref(out);  // the last reference: convi's dispose frees its ORC programs here
    g_object_unref(mask);
    g_object_unref(image);
    g_object_unref(base);
  }
  vips_thread_shutdown();
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 4 || (std::strcmp(argv[1], "guard") && std::strcmp(argv[1], "unguarded"))) {
    std::fprintf(stderr, "usage: orc-race guard|unguarded THREADS ROUNDS\n");
    return 2;
  }
  const bool guard = std::strcmp(argv[1], "guard") == 0;
  if (guard && !matte::guard_libvips_orc()) {
    std::fprintf(stderr, "orc-race: the guard could not be put in place\n");
    return 3;
  }
  if (VIPS_INIT(argv[0])) return 2;
  vips_cache_set_max(0);
  vips_concurrency_set(1);  // one thread per job, as at high concurrency
  const int threads = std::atoi(argv[2]), rounds = std::atoi(argv[3]);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; t++) pool.emplace_back(blur_rounds, rounds);
  for (auto &thread : pool) thread.join();
  std::printf("orc-race: done (%s, %d threads x %d rounds)\n", guard ? "guarded" : "unguarded", threads, rounds);
  return 0;
}
