// How a process joins a data-parallel run: its place (torchrun's RANK,
// WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and the settings of the process group
// and of the gradient all-reduce.
#pragma once
#include <cstdint>
#include <string>

namespace firebrand {

// As TypeScript resolved them (torchrun-environment.ts reads the place,
// config-schema.ts owns the settings' rules and defaults): not checked again.
struct DistributedOptions {
  int64_t rank = 0;
  int64_t worldSize = 1;
  std::string masterAddr;
  int64_t masterPort = 0;
  // Non-empty when a launcher's agent serves the store at MASTER_ADDR:MASTER_PORT (torchrun's
  // TORCHELASTIC_USE_AGENT_STORE): every rank connects as a client, its keys under this prefix
  // ("/worker/attempt_<restart>", as torch.distributed.rendezvous names them).
  std::string agentStorePrefix;
  // "auto": NCCL for CUDA training when built with it, else Gloo; or "gloo", "nccl".
  std::string backend;
  // Rendezvous and every collective fail after this long.
  double timeoutSeconds = 0;
  // Gradients are all-reduced in buckets of about this size (PyTorch DDP's bucket_cap_mb).
  int64_t bucketCapBytes = 0;
  // Rank 0's buffers (BatchNorm statistics) are sent to all ranks before each
  // optimizer step's first forward (DDP's broadcast_buffers).
  bool broadcastBuffers = false;
  // ZeRO stage 1: each rank holds and steps the optimizer state of a share of the parameters.
  bool zeroRedundancyOptimizer = false;
};

}  // namespace firebrand
