#include "onnxruntime.h"

#include "../errors.h"

#include <dlfcn.h>

#include <atomic>
#include <mutex>

namespace matte {

namespace {

// Beside the addon, under the name scripts/stage-onnxruntime.sh gave it: the prebuilt package
// (packages/linux-x64-gnu) and a source build (build/Release) both put it there.
constexpr const char *kLibraryName = "libmatte-onnxruntime.so.1";

std::atomic<bool> loaded{false};
const OrtApiBase *api_base = nullptr;

// The directory of the addon's own file (whatever path Node loaded it from), with a trailing slash.
std::string addon_directory() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void *>(&load_onnxruntime), &info) || !info.dli_fname) return "";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

void open_library() {
  const std::string path = addon_directory() + kLibraryName;
  // RTLD_LOCAL: nothing of this ONNX Runtime joins the global symbol scope, where onnxruntime-node's
  // (another version, loaded before or after) would otherwise meet it. RTLD_NOW: a broken library
  // fails here, with its message, not in the middle of a job. Never closed: sessions and ONNX
  // Runtime's global thread pool live until the process ends.
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw model_error(std::string("cannot load ONNX Runtime (") + path + "): " + dlerror());
  using GetApiBase = const OrtApiBase *(*)();
  auto get_api_base = reinterpret_cast<GetApiBase>(dlsym(handle, "OrtGetApiBase"));
  if (!get_api_base) throw model_error("cannot load ONNX Runtime (" + path + "): it has no OrtGetApiBase");
  const OrtApiBase *base = get_api_base();
  const OrtApi *api = base ? base->GetApi(ORT_API_VERSION) : nullptr;
  if (!api)
    throw model_error("cannot load ONNX Runtime (" + path + "): version " + (base ? base->GetVersionString() : "?") +
                      " lacks API version " + std::to_string(ORT_API_VERSION) + ", which this addon was built for");
  Ort::InitApi(api);
  api_base = base;
}

}  // namespace

void load_onnxruntime() {
  if (loaded.load(std::memory_order_acquire)) return;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded.load(std::memory_order_relaxed)) return;
  open_library();  // throws, and a later call tries again
  loaded.store(true, std::memory_order_release);
}

bool onnxruntime_loaded() { return loaded.load(std::memory_order_acquire); }

std::string onnxruntime_version() {
  load_onnxruntime();
  return api_base->GetVersionString();
}

}  // namespace matte
