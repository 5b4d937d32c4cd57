#include "counters.h"

#include "load.h"
#include "matte/model.h"
#include "orc_guard.h"
#include "threadpool_guard.h"

#include <vips/vips.h>

namespace matte {

namespace {
void *count_object(VipsObject *, void *count, void *) {
  ++*static_cast<int64_t *>(count);
  return nullptr;
}
}  // namespace

Napi::Value counters(const Napi::CallbackInfo &info) {
  int64_t objects = 0;
  vips_object_map(reinterpret_cast<VipsSListMap2Fn>(count_object), &objects, nullptr);
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("objects", double(objects));
  out.Set("trackedBytes", double(vips_tracked_get_mem()));
  out.Set("trackedAllocations", vips_tracked_get_allocs());
  out.Set("openFiles", vips_tracked_get_files());
  // The pixels' bytes the decoders were opened for (native/load.h): a shrink-on-load decodes fewer.
  out.Set("decodedBytes", double(matte::decoded_bytes()));
  matte::InferenceCounts inferences = matte::inference_counts();
  out.Set("inferencesPooled", double(inferences.pooled));
  // How many threads jobs get now (lib/job.ts; tests of MATTE_JOB_THREADS read them).
  out.Set("onnxPoolThreads", inferences.pool_threads);
  out.Set("vipsThreads", vips_concurrency_get());
  // libvips' ORC compiles and frees serialised (native/orc_guard.h).
  out.Set("orcGuarded", matte::libvips_orc_guarded());
  // A failing sink ends without libvips 8.14's racy assertion (native/threadpool_guard.h).
  out.Set("threadpoolGuarded", matte::libvips_threadpool_guarded());
  return out;
}

}  // namespace matte
