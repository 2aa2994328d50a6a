#include "binding/js_errors.h"

#include <c10/util/Exception.h>

#include "core/errors.h"

namespace firebrand::binding {

CapturedError captureCurrentException() {
  try {
    throw;
  } catch (const firebrand::Error& error) {
    return {error.what(), error.code()};
  } catch (const c10::Error& error) {
    return {error.what_without_backtrace(), torchErrorCode(error)};
  } catch (const std::bad_alloc&) {
    return {"out of memory", "ERR_FIREBRAND_OUT_OF_MEMORY"};
  } catch (const std::exception& error) {
    return {error.what(), "ERR_FIREBRAND_INTERNAL"};
  } catch (...) {
    return {"unknown C++ exception", "ERR_FIREBRAND_INTERNAL"};
  }
}

Napi::Error toJsError(Napi::Env env, const CapturedError& error) {
  Napi::Error jsError = Napi::Error::New(env, error.message);
  jsError.Set("code", Napi::String::New(env, error.code));
  return jsError;
}

}  // namespace firebrand::binding
