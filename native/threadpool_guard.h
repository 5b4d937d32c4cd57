// Keeps a failing libvips sink from aborting the process (docs/architecture.md, "Robustness:
// libvips' threadpool assertion").
#pragma once

namespace matte {

/**
 * Routes the running libvips' calls of vips_threadpool_run through matte's wrapper (by rewriting
 * libvips' GOT entries for it), once per process, so that a sink that fails (a job's budget killed
 * it, a decoder failed on a tile) ends the way a finished one does. Returns whether it is in place;
 * false where the platform is not handled (then libvips runs as it is).
 */
bool guard_libvips_threadpool();

/** Whether guard_libvips_threadpool() put the wrapper in place (for the tests and `counters()`). */
bool libvips_threadpool_guarded();

}  // namespace matte
