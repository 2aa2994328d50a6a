// One long operation at a time on a JS handle (they share a model or a
// loader): claim() marks the handle busy, or throws naming what runs, and
// returns the hook that frees it once the operation's promise settles.
#pragma once
#include <napi.h>

#include <functional>
#include <memory>
#include <string>

#include "core/errors.h"

namespace firebrand::binding {

class OperationLock {
 public:
  // `owner` is the handle's JS object, kept alive until the hook runs; `noun`
  // names it in the error ("trainer", "loader").
  std::function<void()> claim(const Napi::Object& owner, const char* operation, const char* noun) {
    throwIfBusy(operation, noun);
    running_ = operation;
    auto keepAlive = std::make_shared<Napi::ObjectReference>(Napi::Persistent(owner));
    return [this, keepAlive] { running_ = nullptr; };
  }

  // For operations that may overlap (predictions queue on the handle's thread):
  // keeps `owner` alive until the returned hook runs, marks nothing busy.
  static std::function<void()> keepAlive(const Napi::Object& owner) {
    auto reference = std::make_shared<Napi::ObjectReference>(Napi::Persistent(owner));
    return [reference] {};
  }

  bool busy() const { return running_ != nullptr; }
  bool running(const char* operation) const { return running_ != nullptr && std::string(running_) == operation; }

  void throwIfBusy(const char* operation, const char* noun) const {
    if (running_) {
      throw InvalidState(std::string("cannot start ") + operation + ": this " + noun + " is already running " +
                         running_ + "; await it before starting another");
    }
  }

 private:
  const char* running_ = nullptr;
};

}  // namespace firebrand::binding
