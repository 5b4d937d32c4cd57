// Redirecting the running libvips' own calls of an exported function to one of ours, by rewriting
// the entries of libvips' global offset table for it (what plthook does). It is how matte works
// around two races in libvips 8.14 without patching the system library: native/orc_guard.h and
// native/threadpool_guard.h.
#pragma once

namespace matte {

/**
 * The function `name` as libvips' own calls bind to it (looked up from libvips' handle: for
 * liborc's functions, the liborc libvips links), or nullptr. The libvips is the one the addon is
 * linked to, not another in the process (sharp's).
 */
void *libvips_binding(const char *name);

/**
 * Points every GOT entry of libvips for `name` (calls through the PLT, or the function's address
 * taken) at `replacement`; returns how many there were (0: nothing changed, e.g. on a platform
 * other than x86_64 and aarch64). Call it before libvips can run the function on another thread.
 */
int redirect_libvips_calls(const char *name, void *replacement);

}  // namespace matte
