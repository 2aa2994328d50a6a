// A process group of PyTorch's distributed engine (c10d): a TCPStore
// rendezvous at MASTER_ADDR:MASTER_PORT, then Gloo (CPU) or NCCL (CUDA)
// collectives. Every failure, timeout included, is a DistributedError that
// names the operation, this rank and the backend.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <memory>
#include <string>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <vector>

#include "core/distributed/distributed_options.h"

namespace firebrand {

class DistributedGroup {
 public:
  // Joins the run (once per process and backend; later calls with the same
  // place get the same group): blocks until all worldSize ranks arrived or the
  // timeout passed. `device` picks the backend when options.backend is "auto".
  static std::shared_ptr<DistributedGroup> join(const DistributedOptions& options, const c10::Device& device);
  ~DistributedGroup();

  int64_t rank() const { return options_.rank; }
  int64_t worldSize() const { return options_.worldSize; }
  const std::string& backendName() const { return backendName_; }
  const DistributedOptions& options() const { return options_; }

  // Starts summing `tensor` in place over all ranks; finish it with wait().
  c10::intrusive_ptr<c10d::Work> startAllReduce(at::Tensor& tensor);
  // Waits for `work`; a failure or timeout throws, naming `what` ("the gradients").
  void wait(const c10::intrusive_ptr<c10d::Work>& work, const std::string& what) const;
  void allReduceSum(at::Tensor& tensor, const std::string& what);
  // Overwrites `tensors` (any dtypes) with rank `root`'s.
  void broadcast(int64_t root, const std::vector<at::Tensor>& tensors, const std::string& what);
  // Tells the other ranks, through the rendezvous store, that this rank failed (the first failure posted
  // stays): a rank waiting on a collective (Gloo) stops within a second, naming it, instead of waiting out
  // the timeout for a rank that is alive but will never answer.
  void postFailure(const std::string& message) const;

 private:
  struct Backend;
  DistributedGroup(const DistributedOptions& options, std::string backendName, std::unique_ptr<Backend> backend);
  [[noreturn]] void fail(const std::string& what, const std::string& cause) const;
  // Waits for `work` (`operation`, for errors), watching for a failure another rank posted.
  void waitWatching(const c10::intrusive_ptr<c10d::Work>& work, const std::string& operation) const;
  // What another rank posted with postFailure, or "" (also when the store cannot be asked).
  std::string postedFailure() const;

  DistributedOptions options_;
  std::string backendName_;
  std::unique_ptr<Backend> backend_;
};

}  // namespace firebrand
