// Typed errors of the native side. `code` is one of the library's MatteErrorCode values
// (lib/errors.ts); the server maps it to an HTTP status. Everything else that escapes a job is
// reported as `internal`.
#pragma once

#include <stdexcept>
#include <string>

namespace matte {

struct Error : std::runtime_error {
  std::string code;
  std::string path;  // e.g. "operations[3].resize", empty when not about one value

  Error(std::string code, const std::string &message, std::string path = "")
      : std::runtime_error(message), code(std::move(code)), path(std::move(path)) {}
};

inline Error unsupported_image(const std::string &message) { return Error("unsupported_image", message); }
inline Error image_too_large(const std::string &message) { return Error("image_too_large", message); }
inline Error invalid_operation(int index, const std::string &op, const std::string &message) {
  std::string path = "operations[" + std::to_string(index) + "]." + op;
  return Error("invalid_operations", path + " " + message, path);
}
inline Error model_error(const std::string &message) { return Error("model_error", message); }

}  // namespace matte
