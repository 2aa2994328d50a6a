// What incremental decoding (generation with a key/value cache) keeps between
// steps: a traced forward then runs on the new positions only, and the ops
// that look back along the sequence read the earlier positions from here.
// Causal attention keeps its keys and values, a recurrent layer its final
// state, and positions (an arange or slice up to the sequence's length)
// continue from `past`.
#pragma once
#include <ATen/core/Tensor.h>

#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "core/nn/llama_decode_layer.h"

namespace firebrand {

// A module call that a native kernel decodes (graph/decode_kernels): its layers' tensors, resolved at the
// generation's first step, and its keys and values once it holds them.
struct KernelDecodeState {
  bool resolved = false;
  bool fits = false;  // the kernel takes these weights (no DoRA, dtypes it reads)
  LlamaLayerWeights weights;
  LayerKeyValues keyValues;
};

struct DecodeCache {
  int64_t past = 0;                                             // positions the entries hold
  int64_t fresh = 0;                                            // positions the forward running now adds
  std::unordered_map<size_t, std::vector<at::Tensor>> entries;  // by graph node
  std::unordered_map<size_t, KernelDecodeState> kernels;        // by the call's first node
  // By size node: whether it has equaled `fresh` at every step, so measures the sequence (the
  // prompt's length at the first, 1 after). A coincidence is caught by generate's check.
  std::unordered_map<size_t, bool> sequenceSizes;

  void noteSize(size_t node, int64_t value) {
    const auto [it, first] = sequenceSizes.emplace(node, value == fresh);
    if (!first) it->second = it->second && value == fresh;
  }
  // How far positions up to the traced size in `slot` move: past when it measures the sequence.
  int64_t positionShift(int64_t slot) const {
    if (slot < 0) return 0;
    const auto it = sequenceSizes.find(static_cast<size_t>(slot));
    return it != sequenceSizes.end() && it->second ? past : 0;
  }
};

// Thrown by an op that cannot continue from a cache (it looks ahead, or takes a mask written for
// the whole sequence); the reason names the op and why. Generation then runs full forwards.
class NotIncremental : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace firebrand
