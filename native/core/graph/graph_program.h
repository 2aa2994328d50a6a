// A traced forward compiled once: one function per node, run in order over a
// frame of values. A failing op names its module path, the op, the shapes it
// got and the forward's source line.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/activation_checkpoint.h"
#include "core/graph/decode_kernels.h"
#include "core/graph/module_tree.h"
#include "core/graph/node_args.h"

namespace firebrand {

class GraphProgram {
 public:
  GraphProgram(GraphSpec graph, ModuleTree& tree);

  // The outputs for `inputs` (one per graph input, in order), in graph().returns order.
  // With a `cache`, incremental decoding: the inputs are the newest positions, and a NotIncremental
  // names the op that cannot continue from the cache.
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs, bool training, c10::Device device,
                              DecodeCache* cache = nullptr) const;
  // Every node's value for `inputs` (model.summary() reads their shapes).
  std::vector<c10::IValue> values(const std::vector<at::Tensor>& inputs, bool training, c10::Device device) const;

  const std::vector<std::string>& inputs() const { return graph_.inputs; }
  const GraphSpec& graph() const { return graph_; }

  // Activation checkpointing: every call of these modules (paths in `tree`) recomputes its
  // activations in backward while training. Returns the paths that run in the forward.
  std::vector<std::string> checkpoint(const std::vector<std::string>& modulePaths, ModuleTree& tree);
  const CheckpointSegment& segment(size_t index) const { return segments_.at(index); }
  // Runs nodes [begin, end) on `frame`; a failing op is named as in run().
  void runSteps(size_t begin, size_t end, GraphFrame& frame) const;

 private:
  OpRun compileNode(size_t index, ModuleTree& tree);
  // `keepValues`: every node's value stays in the frame; otherwise each is dropped once no later node reads it.
  GraphFrame runFrame(const std::vector<at::Tensor>& inputs, bool training, c10::Device device, DecodeCache* cache,
                      bool keepValues) const;
  bool runKernel(size_t kernel, GraphFrame& frame) const;
  [[noreturn]] void fail(size_t index, const GraphFrame& frame, const std::exception& error, bool wrongType) const;

  GraphSpec graph_;
  std::optional<at::ScalarType> inputDtype_;  // the model's dtype: floating inputs are cast to it
  std::vector<OpRun> steps_;                  // by node; empty for inputs
  std::vector<int64_t> inputSlots_;           // the node of each graph input
  std::vector<std::vector<int64_t>> reads_;   // the nodes each node reads, for errors
  // By node: the values no later node (nor the graph's outputs) reads, dropped once it ran, for their memory to
  // serve the next ops while it is still in cache.
  std::vector<std::vector<int64_t>> lastReadBy_;
  std::vector<CheckpointSegment> segments_;
  std::vector<int64_t> segmentAt_;                                // by node: the segment that begins there, or -1
  std::vector<std::shared_ptr<torch::nn::Module>> scopeModules_;  // by node: whose train/eval mode it runs in
  std::unique_ptr<const DecodeKernels> decodeKernels_;            // module calls a native kernel decodes
};

}  // namespace firebrand
