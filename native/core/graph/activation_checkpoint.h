// Activation checkpointing (torch.utils.checkpoint) for a traced forward: the
// nodes a checkpointed module runs form a segment that trains without keeping
// its activations; backward runs it again, with the random state, autocast and
// BatchNorm statistics it had, and backpropagates through the recomputation.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "core/graph/node_args.h"

namespace firebrand {

class GraphProgram;

// The nodes [begin, end) of one call of the module at `path`.
struct CheckpointSegment {
  size_t begin = 0;
  size_t end = 0;
  std::string path;
  std::vector<int64_t> reads;          // earlier nodes the segment reads
  std::vector<int64_t> escapes;        // its nodes that later nodes (or the outputs) read
  std::vector<at::Tensor> parameters;  // the module's: inputs of the autograd function, so it always runs backward
  std::vector<at::Tensor> buffers;     // the module's: the recomputation must not move BatchNorm statistics twice
};

// Runs `segment` of `program` on `frame` without keeping its activations; its escaping values are
// in the frame afterwards (tensors attached to the recomputing backward).
void runCheckpointed(const GraphProgram& program, size_t segment, GraphFrame& frame);

}  // namespace firebrand
