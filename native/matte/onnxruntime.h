// ONNX Runtime, loaded when a model first needs it rather than with the addon.
//
// The addon does not link ONNX Runtime: linked, its large library would be mapped and its static
// initialisers run at `import`, resident in every process, also in the many processes that only
// edit images (docs/architecture.md, "What a process loads at start"). Instead the library that
// ships beside the addon (libmatte-onnxruntime.so.1, renamed from libonnxruntime.so.1: see
// CMakeLists.txt) is opened by its exact path, privately (RTLD_LOCAL), the first time a model is
// loaded or the version is asked for, and the C++ wrapper is pointed at its API
// (ORT_API_MANUAL_INIT, set for every translation unit by the build). The library needs nothing else: its one entry point is OrtGetApiBase.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <string>

namespace matte {

/**
 * Opens ONNX Runtime once (thread-safe) and initialises the C++ wrapper's API pointer. Every use of
 * an Ort:: type must come after it. Throws matte::Error `model_error` naming the library file when
 * it cannot be opened or lacks the API version the addon was built for.
 */
void load_onnxruntime();

/** Whether load_onnxruntime() has succeeded in this process (nothing is loaded by asking). */
bool onnxruntime_loaded();

/** The ONNX Runtime version the addon runs with (loads the library). */
std::string onnxruntime_version();

}  // namespace matte
