// Starting the system libvips inside a process that may hold another libvips (sharp's) and
// another ONNX Runtime (onnxruntime-node). See docs/architecture.md, "Living beside sharp".
#pragma once

#include <string>

namespace matte {

/**
 * Starts libvips once: checks the run-time version (>= 8.14), runs vips_init without letting it
 * load its modules into the global symbol scope, then loads the one module matte uses (heif, for
 * AVIF) privately. Returns an empty string on success, else a message for the user.
 */
std::string start_libvips();

}  // namespace matte
