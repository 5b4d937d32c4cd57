// Serialises libvips 8.14's use of liborc's code memory (issue 11: the crash seen once under ASan in
// test/engine/error-isolation). See docs/architecture.md, "Robustness: liborc's code memory".
#pragma once

namespace matte {

/**
 * Routes the running libvips' calls of orc_program_compile and orc_program_free through one mutex
 * (by rewriting libvips' GOT entries for them), once per process. Returns whether both calls are
 * guarded; false where there is nothing to guard (a libvips without liborc) or the platform is not
 * handled (then libvips runs as it is).
 */
bool guard_libvips_orc();

/** Whether guard_libvips_orc() put the guard in place (for the tests and `counters()`). */
bool libvips_orc_guarded();

}  // namespace matte
