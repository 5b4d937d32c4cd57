// libvips' own bookkeeping, exposed for leak checks (the fuzzer and the soak): how many VipsObjects
// are alive and how much pixel memory libvips is tracking. LeakSanitizer cannot see a leaked
// VipsImage (libvips keeps every live object in a global table, so it stays reachable), these
// counters can: once every job has finished they return to their idle values.
#pragma once

#include <napi.h>

namespace matte {

/** counters(): { objects, trackedBytes, trackedAllocations, openFiles, decodedBytes, ... }. */
Napi::Value counters(const Napi::CallbackInfo &info);

}  // namespace matte
