// Error types of the core. Each carries a stable code the binding hands to
// JavaScript as `error.code`, so callers can branch without parsing messages.
#pragma once
#include <stdexcept>
#include <string>

namespace firebrand {

class Error : public std::runtime_error {
 public:
  Error(std::string code, const std::string& message) : std::runtime_error(message), code_(std::move(code)) {}
  const std::string& code() const noexcept { return code_; }

 private:
  std::string code_;
};

// A value given by the caller is out of range, of the wrong type or unknown.
struct InvalidArgument : Error {
  explicit InvalidArgument(const std::string& message) : Error("ERR_FIREBRAND_INVALID_ARGUMENT", message) {}
};

// Tensors whose shapes do not fit together (data vs model, output vs targets).
struct ShapeMismatch : Error {
  explicit ShapeMismatch(const std::string& message) : Error("ERR_FIREBRAND_SHAPE_MISMATCH", message) {}
};

// A file that cannot be read or is not in the expected format.
struct FileError : Error {
  explicit FileError(const std::string& message) : Error("ERR_FIREBRAND_FILE", message) {}
};

// A loss or gradient norm that is NaN or infinite (nonFiniteLoss: 'error').
struct NonFiniteValue : Error {
  explicit NonFiniteValue(const std::string& message) : Error("ERR_FIREBRAND_NON_FINITE", message) {}
};

// An operation that cannot start now (a second fit on a busy trainer, ...).
struct InvalidState : Error {
  explicit InvalidState(const std::string& message) : Error("ERR_FIREBRAND_INVALID_STATE", message) {}
};

// A model or op that exportOnnx cannot write (no ONNX form, a TorchScript-source model).
struct NotExportable : Error {
  explicit NotExportable(const std::string& message) : Error("ERR_FIREBRAND_NOT_EXPORTABLE", message) {}
};

// A collective operation of a data-parallel run that failed or timed out:
// another rank stopped, crashed or could not be reached.
struct DistributedError : Error {
  explicit DistributedError(const std::string& message) : Error("ERR_FIREBRAND_DISTRIBUTED", message) {}
};

}  // namespace firebrand

namespace firebrand {

// Call inside a catch block: rethrows the exception in flight as a
// firebrand::Error whose message starts with `context` ("epoch 2, step 17").
// libtorch's c10::Error keeps its message without the C++ backtrace.
[[noreturn]] void rethrowWithContext(const std::string& context);

// The code for an exception raised inside libtorch: ERR_FIREBRAND_OUT_OF_MEMORY
// for failed allocations, ERR_FIREBRAND_TORCH otherwise.
std::string torchErrorCode(const std::exception& error);
// The message of an error a libtorch op threw: c10::Error's without its backtrace; some ops
// (view's size inference) throw a plain std::runtime_error.
std::string torchReason(const std::exception& error);

}  // namespace firebrand
