// Why: libvips 8.14 compiles ORC programs for some operations (convi: the integer convolution of
// blur; reducev: resize; morph) when they are built, and frees them when the operation is
// disposed, on whichever thread drops its last reference. It compiles under its global lock but
// frees with no lock at all (libvips/iofuncs/vector.c, vips_vector_free), and the liborc of Debian 12
// (0.4.33) frees a program's code with no lock either: orc_code_chunk_free merges the freed chunk
// with its neighbours in liborc's one process-wide list of code chunks. Two jobs disposing such
// operations at once, or one disposing while another compiles, corrupt that list: a SIGSEGV or a
// double free in liborc, i.e. the end of the server. Reduced to liborc alone (compile under a lock,
// free without, 4 threads x 50000): 7 runs of 10 crashed; with the free under the same lock, 0 of 10.
// Later liborc releases lock inside orc_code_chunk_free; libvips 8.15 dropped ORC.
//
// The fix here: libvips' calls of orc_program_compile and orc_program_free go through one mutex of
// ours, by rewriting the two entries of libvips' global offset table (native/libvips_got.h), so ORC
// keeps its speed (turning ORC off, VIPS_NOVECTOR, costs 1.4-3.5x the CPU of a blur or a resize).
// The mutex is innermost (liborc calls nothing back), so it cannot deadlock with libvips' own lock.
#include "orc_guard.h"

#include "libvips_got.h"

#include <mutex>

namespace matte {

namespace {

std::mutex orc_mutex;
using Compile = int (*)(void *);
using Free = void (*)(void *);
Compile real_compile = nullptr;
Free real_free = nullptr;
bool orc_guarded = false;

int locked_compile(void *program) {
  std::lock_guard<std::mutex> lock(orc_mutex);
  return real_compile(program);
}

void locked_free(void *program) {
  std::lock_guard<std::mutex> lock(orc_mutex);
  real_free(program);
}

bool install() {
  // What libvips' own calls bind to (its liborc).
  real_compile = reinterpret_cast<Compile>(libvips_binding("orc_program_compile"));
  real_free = reinterpret_cast<Free>(libvips_binding("orc_program_free"));
  if (!real_compile || !real_free) return false;  // a libvips without ORC
  // Both or neither: a guarded free would still race with an unguarded compile.
  if (redirect_libvips_calls("orc_program_compile", reinterpret_cast<void *>(&locked_compile)) == 0) return false;
  return redirect_libvips_calls("orc_program_free", reinterpret_cast<void *>(&locked_free)) > 0;
}

}  // namespace

bool guard_libvips_orc() {
  static const bool result = [] {
    orc_guarded = install();
    return orc_guarded;
  }();
  return result;
}

bool libvips_orc_guarded() { return orc_guarded; }

}  // namespace matte
