#include "core/errors.h"

#include <c10/util/Exception.h>

namespace firebrand {

std::string torchErrorCode(const std::exception& error) {
  const std::string message = error.what();
  const bool outOfMemory =
      message.find("can't allocate memory") != std::string::npos || message.find("out of memory") != std::string::npos;
  return outOfMemory ? "ERR_FIREBRAND_OUT_OF_MEMORY" : "ERR_FIREBRAND_TORCH";
}

std::string torchReason(const std::exception& error) {
  const auto* torchError = dynamic_cast<const c10::Error*>(&error);
  return torchError ? torchError->what_without_backtrace() : error.what();
}

void rethrowWithContext(const std::string& context) {
  try {
    throw;
  } catch (const Error& error) {
    throw Error(error.code(), context + ": " + error.what());
  } catch (const c10::Error& error) {
    throw Error(torchErrorCode(error), context + ": " + error.what_without_backtrace());
  } catch (const std::exception& error) {
    throw Error("ERR_FIREBRAND_INTERNAL", context + ": " + error.what());
  }
}

}  // namespace firebrand
