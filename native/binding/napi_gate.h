// How native threads call into Node (thread-safe functions): through their
// environment's gate, which closes when the environment goes (its cleanup
// hook) or the process exits (process.exit() runs no cleanup hook, only
// static destructors: environment_teardown.cpp). Node's own cleanup frees a
// thread-safe function whatever threads still hold it; a call or release
// after that aborted the process.
#pragma once
#include <mutex>

namespace firebrand::binding {

class NapiGate {
 public:
  // Runs `call` (a thread-safe function's call or release) unless the environment is going,
  // never while it goes; returns whether it ran.
  template <typename Call>
  bool pass(Call&& call) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!open_) return false;
    call();
    return true;
  }
  // From then on, nothing passes.
  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = false;
  }

 private:
  std::mutex mutex_;
  bool open_ = true;
};

}  // namespace firebrand::binding
