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

  bool busy() const { return running_ != nullptr; }

  void throwIfBusy(const char* operation, const char* noun) const {
    if (running_) {
      throw InvalidState(std::string("cannot start ") + operation + ": this " + noun + " is already running " + running_ +
                         "; await it before starting another");
    }
  }

 private:
  const char* running_ = nullptr;
};

}  // namespace firebrand::binding
