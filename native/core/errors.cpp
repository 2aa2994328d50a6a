#include "core/errors.h"

#include <c10/util/Exception.h>

namespace firebrand {

void rethrowWithContext(const std::string& context) {
  try {
    throw;
  } catch (const Error& error) {
    throw Error(error.code(), context + ": " + error.what());
  } catch (const c10::Error& error) {
    throw Error("ERR_FIREBRAND_TORCH", context + ": " + error.what_without_backtrace());
  } catch (const std::exception& error) {
    throw Error("ERR_FIREBRAND_INTERNAL", context + ": " + error.what());
  }
}

}  // namespace firebrand
