// The JS side of a background task: a promise to settle on the JS thread and
// a hook that runs once it is settled (to mark a trainer free again).
#pragma once
#include <napi.h>

#include <functional>

#include "binding/js_errors.h"

namespace firebrand::binding {

class PromiseSettlement {
 public:
  using Settled = std::function<void()>;

  PromiseSettlement(Napi::Env env, Settled settled)
      : deferred_(Napi::Promise::Deferred::New(env)), settled_(std::move(settled)) {}

  Napi::Promise promise() const { return deferred_.Promise(); }

  // Builds the result with `make`; an exception while building rejects instead.
  template <typename Make>
  void resolveWith(Napi::Env env, Make&& make) {
    Napi::Value value;
    try {
      value = make();
    } catch (...) {
      reject(toJsError(env, captureCurrentException()).Value());
      return;
    }
    deferred_.Resolve(value);
    done();
  }

  void reject(const Napi::Value& error) {
    deferred_.Reject(error);
    done();
  }

 private:
  void done() {
    if (settled_) settled_();
  }

  Napi::Promise::Deferred deferred_;
  Settled settled_;
};

}  // namespace firebrand::binding
