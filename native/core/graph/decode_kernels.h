// Module calls that a native kernel runs whole when generation decodes one
// position per sequence without autograd: the module declares the kernel
// (Module.decodeKernel: LlamaDecoderLayer's is nn/llama_decode_layer), and the
// call's nodes are skipped for it. The prompt's forward runs the nodes and
// fills the graph's key/value cache; the kernel takes it over at its first step.
// A call the kernel cannot take (DoRA, an unexpected dtype or shape) runs its nodes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/graph/module_spec.h"
#include "core/graph/module_tree.h"
#include "core/graph/node_args.h"
#include "core/nn/llama_decode_layer.h"

namespace firebrand {

// Module calls the kernels have run in this process: what tells that generation took them.
int64_t decodeKernelSteps();

class DecodeKernels {
 public:
  // `reads`: the nodes each node reads. Calls whose nodes the kernel could not stand for are left out.
  DecodeKernels(const GraphSpec& graph, const std::vector<std::vector<int64_t>>& reads, ModuleTree& tree);

  // The kernel call whose nodes begin at `node`, or -1.
  int64_t startingAt(size_t node) const { return node < startAt_.size() ? startAt_[node] : -1; }
  size_t begin(size_t call) const { return calls_[call].begin; }
  // The node after the call's last.
  size_t end(size_t call) const { return calls_[call].end; }
  // Runs the call on `frame` when the kernel takes it (a decoding step of one position): true; false when
  // the call's nodes must run. Throws NotIncremental when the kernel holds the call's cache but cannot go on.
  bool run(size_t call, GraphFrame& frame) const;

 private:
  struct Call {
    size_t begin = 0, end = 0;
    std::string path;
    std::vector<int64_t> inputs;  // x, cos, sin and the mask (-1: none)
    int64_t output = -1;
    size_t attentionNode = 0;  // whose cache entry the prompt's forward filled
    LlamaLayerShape shape;
    std::vector<TreeLayer*> layers;  // kLayerNames' order
  };
  bool resolve(const Call& call, LlamaLayerWeights& weights) const;

  std::vector<Call> calls_;
  std::vector<int64_t> startAt_;
};

}  // namespace firebrand
