// Starting the system libvips inside a process that may hold another libvips (sharp's) and
// another ONNX Runtime (onnxruntime-node). See docs/architecture.md, "Living beside sharp".
#pragma once

#include <string>

namespace matte {

/**
 * Starts libvips once: checks the run-time version (>= 8.14) and runs vips_init without letting it
 * load its modules into the global symbol scope. Returns an empty string on success, else a
 * message for the user.
 */
std::string start_libvips();

/**
 * Loads one module of the running libvips (e.g. "vips-heif.so") privately (RTLD_LOCAL) and
 * registers its operations, once per process, thread-safe. A module that is missing (a libvips
 * built without it) leaves its formats unavailable, as libvips itself would.
 */
void load_libvips_module(const char *name);

}  // namespace matte
