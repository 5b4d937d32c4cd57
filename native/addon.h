// What the product addon's N-API surface (addon.cc) shares with the probes build (native/probes/):
// its exports, the worker that turns a thrown Error into a rejected promise, and the model handle.
#pragma once

#include <napi.h>
#include <vips/vips8>

#include "errors.h"
#include "matte/model.h"

#include <memory>
#include <new>
#include <string>

namespace matte::addon {

using ModelPtr = std::shared_ptr<const Model>;

/** Sets the product's exports (run, createJob, cancel, loadModel, configure, versions, counters) on `exports`. */
Napi::Object init(Napi::Env env, Napi::Object exports);

/** The model behind a handle from loadModel (nullptr for undefined or null). */
ModelPtr model_from(const Napi::Value &value);

inline Napi::Error to_js_error(Napi::Env env, const std::string &code, const std::string &message, const std::string &path) {
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("code", Napi::String::New(env, code));
  if (!path.empty()) error.Set("path", Napi::String::New(env, path));
  return error;
}

// A worker that turns what Execute throws into a rejected promise carrying `code` and `path`.
class Worker : public Napi::AsyncWorker {
 public:
  explicit Worker(Napi::Env env) : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise promise() { return deferred_.Promise(); }

 protected:
  virtual void Work() = 0;
  virtual Napi::Value Result(Napi::Env env) = 0;

  void Execute() override {
    try {
      Work();
    } catch (const Error &err) {
      fail(err.code, err.what(), err.path);
    } catch (const vips::VError &) {
      // libvips' error text is process-wide (it may be another job's): never this job's message.
      vips_error_clear();
      fail("internal", "image processing failed", "");
    } catch (const std::bad_alloc &) {
      fail("internal", "out of memory", "");
    } catch (const std::exception &err) {
      fail("internal", err.what(), "");
    }
  }
  void OnOK() override { deferred_.Resolve(Result(Env())); }
  void OnError(const Napi::Error &) override {
    deferred_.Reject(to_js_error(Env(), code_, message_, path_).Value());
  }

 private:
  void fail(const std::string &code, const std::string &message, const std::string &path) {
    code_ = code;
    message_ = message;
    path_ = path;
    SetError(message);
  }
  Napi::Promise::Deferred deferred_;
  std::string code_, message_, path_;
};

// Queues the worker that make() builds and returns its promise; an argument error thrown while
// building it becomes a rejected promise too, so JS always gets a Promise.
template <typename Make>
Napi::Value start(Napi::Env env, Make make) {
  try {
    Worker *worker = make();
    Napi::Promise promise = worker->promise();
    worker->Queue();
    return promise;
  } catch (const Error &err) {
    auto deferred = Napi::Promise::Deferred::New(env);
    deferred.Reject(to_js_error(env, err.code, err.what(), err.path).Value());
    return deferred.Promise();
  }
}

}  // namespace matte::addon
