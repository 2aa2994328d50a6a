// How a process joins a data-parallel run: its place (torchrun's RANK,
// WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and the settings of the process group
// and of the gradient all-reduce.
#pragma once
#include <cstdint>
#include <string>

#include "core/options/option_value.h"

namespace firebrand {

struct DistributedOptions {
  int64_t rank = 0;
  int64_t worldSize = 1;
  std::string masterAddr = "127.0.0.1";
  int64_t masterPort = 29500;
  // "auto": NCCL for CUDA training when built with it, else Gloo; or "gloo", "nccl".
  std::string backend = "auto";
  // Rendezvous and every collective fail after this long (PyTorch's default: 30 min).
  double timeoutSeconds = 1800;
  // Gradients are all-reduced in buckets of about this size (PyTorch DDP's bucket_cap_mb).
  int64_t bucketCapBytes = 25 * 1024 * 1024;
  // Rank 0's buffers (BatchNorm statistics) are sent to all ranks before each
  // optimizer step's first forward (DDP's broadcast_buffers).
  bool broadcastBuffers = true;
};

// Reads { rank, worldSize, masterAddr, masterPort, backend, timeout (seconds),
// bucketCapMb, broadcastBuffers }; errors name `owner`.
DistributedOptions distributedOptions(const OptionMap& options, const std::string& owner = "config.distributed");

}  // namespace firebrand
