// Turns C++ exceptions into JavaScript errors: every Node-API entry point runs
// through guard(), every worker captures its exception for the JS thread.
// A C++ exception must never reach Node and abort the process.
#pragma once
#include <napi.h>

#include <string>
#include <utility>

namespace firebrand::binding {

// An exception taken on any thread, to be raised later on the JS thread.
struct CapturedError {
  std::string message;
  std::string code;
};

// Call inside catch (...): message and code of the exception in flight.
CapturedError captureCurrentException();

// A JS Error with `message` and `code` set.
Napi::Error toJsError(Napi::Env env, const CapturedError& error);

// Runs `body` and turns any C++ exception into a thrown JS error.
template <typename Body>
auto guard(Napi::Env env, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const Napi::Error&) {
    throw;
  } catch (...) {
    throw toJsError(env, captureCurrentException());
  }
}

}  // namespace firebrand::binding
