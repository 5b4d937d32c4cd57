#include "libvips.h"

#include "orc_guard.h"
#include "threadpool_guard.h"

#include <vips/vips8>

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <optional>
#include <set>

namespace matte {

namespace {

// Why not plain VIPS_INIT: vips_init loads every module of <libdir>/vips-modules-X.Y with
// g_module_open(path, G_MODULE_BIND_LAZY), that is dlopen(RTLD_GLOBAL). That promotes each module
// and everything it depends on (the system libvips, GLib, GObject, libheif, ImageMagick...) into
// the process's global symbol scope, which the dynamic loader searches before any library's own
// dependencies. A library loaded later that exports the same names -- sharp's libvips-cpp, which
// carries its own libvips and GLib -- then has its calls bound to ours: two GObject type systems
// meet, g_object_ref asserts and the process dies (SIGSEGV). With VIPSHOME pointing nowhere,
// vips_init finds no module directory; the modules matte needs are then opened with RTLD_LOCAL.
const char *kNoModules = "/nonexistent/matte-loads-libvips-modules-itself";

// The one module matte uses, heif (HEIF/AVIF decoding), is loaded on first need by
// load_libvips_module (native/encode/libheif.h), not at start: it brings libheif and its codecs.
// ImageMagick, poppler, openslide and jxl stay unloaded: nothing of matte calls them.

class ScopedEnv {
 public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char *name_;
  std::optional<std::string> old_;
};

// <directory of the libvips.so that was actually loaded>/vips-modules-MAJOR.MINOR, as vips_init
// would compute it for the system library.
std::string module_dir() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void *>(&vips_init), &info) || !info.dli_fname) return "";
  std::string library = info.dli_fname;
  size_t slash = library.rfind('/');
  if (slash == std::string::npos) return "";
  return library.substr(0, slash) + "/vips-modules-" + std::to_string(vips_version(0)) + "." +
         std::to_string(vips_version(1));
}

// Opens a module privately and runs the registration that GModule would have run. A missing
// module (a libvips built without it) only means that format is unavailable, as with libvips.
void load_module_locally(const std::string &path) {
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return;
  using CheckInit = const char *(*)(void *);
  auto check_init = reinterpret_cast<CheckInit>(dlsym(handle, "g_module_check_init"));
  // The module's types are registered with GObject from here on: it is never closed.
  if (check_init) check_init(nullptr);
}

}  // namespace

std::string start_libvips() {
  static std::string result = [] {
    const int major = vips_version(0), minor = vips_version(1);
    if (major < 8 || (major == 8 && minor < 14))
      return "libvips 8.14 or newer is needed, and this system has " + std::to_string(major) + "." +
             std::to_string(minor) + ": install a newer libvips42 (Debian 12, Ubuntu 24.04 or later)";
    // Before any job can compile or free an ORC program (native/orc_guard.h) or run a sink
    // (native/threadpool_guard.h).
    guard_libvips_orc();
    guard_libvips_threadpool();
    {
      ScopedEnv no_modules("VIPSHOME", kNoModules);
      if (VIPS_INIT("matte")) {
        std::string message = vips_error_buffer();
        vips_error_clear();
        return "libvips failed to start: " + message;
      }
    }
    // vips_init noted the missing module directory in the error buffer.
    vips_error_clear();
    return std::string();
  }();
  return result;
}

void load_libvips_module(const char *name) {
  static std::mutex mutex;
  static std::set<std::string> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (!loaded.insert(name).second) return;
  static const std::string dir = module_dir();
  if (!dir.empty()) load_module_locally(dir + "/" + name);
}

}  // namespace matte
