#include "core/graph/channels_last_lowering.h"

#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>

#include <set>
#include <string>

#include "core/graph/format_strides.h"
#include "core/graph/inference_folding.h"
#include "core/graph/layer_calls.h"

namespace firebrand {
namespace {

// Ops whose kernels take any memory format, give the same values and keep the format: elementwise
// ops, pooling, dropout (identity at inference) and flatten (a reshape).
const std::set<std::string>& formatFreeOps() {
  static const std::set<std::string> ops{"relu",
                                         "sigmoid",
                                         "tanh",
                                         "silu",
                                         "mish",
                                         "hardswish",
                                         "hardsigmoid",
                                         "gelu",
                                         "leakyRelu",
                                         "elu",
                                         "hardtanh",
                                         "clamp",
                                         "add",
                                         "sub",
                                         "mul",
                                         "div",
                                         "neg",
                                         "maxPool2d",
                                         "avgPool2d",
                                         "dropout",
                                         "featureDropout",
                                         "flatten",
                                         "adaptiveAvgPool2d"};
  return ops;
}

bool isConv2d(const TreeLayer* layer) {
  return layer && dynamic_cast<torch::nn::Conv2dImpl*>(layer->built.module.ptr().get());
}

bool takesAnyFormat(const GraphNode& node, const TreeLayer* layer) {
  if (layer) return isConv2d(layer) || dynamic_cast<torch::nn::BatchNorm2dImpl*>(layer->built.module.ptr().get());
  return formatFreeOps().count(node.op) > 0;
}

// The convolution reads its input channels-last when the forward runs lowered, a map dense in both orders
// too (format_strides.h): read as rows, it was convolved, and the maps after it pooled, in rows
// (libtorch's max_pool2d in rows: 14x its time).
OpRun readingChannelsLast(OpRun step, int64_t input) {
  return [step = std::move(step), input](GraphFrame& f) -> c10::IValue {
    c10::IValue& value = f.values[input];
    if (inferenceLoweringActive() && value.isTensor()) {
      const at::Tensor& x = value.toTensor();
      constexpr auto channelsLast = at::MemoryFormat::ChannelsLast;
      if (x.dim() == 4 && x.is_floating_point() && x.device().is_cpu() && x.suggest_memory_format() != channelsLast)
        value = withFormatStrides(x.contiguous(channelsLast), channelsLast);
    }
    return step(f);
  };
}

// An op that needs the default order gets its channels-last inputs back in it (once: the frame keeps them).
OpRun readingContiguous(OpRun step, std::vector<int64_t> inputs) {
  return [step = std::move(step), inputs = std::move(inputs)](GraphFrame& f) -> c10::IValue {
    for (const int64_t input : inputs) {
      c10::IValue& value = f.values[input];
      if (value.isTensor()) value = withoutChannelsLast(value.toTensor());
    }
    return step(f);
  };
}

}  // namespace

at::Tensor withoutChannelsLast(const at::Tensor& output) {
  const bool channelsLast =
      output.dim() == 4 && !output.is_contiguous() && output.is_contiguous(at::MemoryFormat::ChannelsLast);
  return channelsLast ? output.contiguous() : output;
}

void keepChannelsLast(const GraphSpec& graph, const std::vector<std::vector<int64_t>>& reads, ModuleTree& tree,
                      std::vector<OpRun>& steps) {
  // Whether each node's value may be channels-last: a convolution's, or a format-free op's on such a value.
  std::vector<bool> channelsLast(graph.nodes.size(), false);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const GraphNode& node = graph.nodes[i];
    const TreeLayer* layer = calledLayer(node, i, tree);
    std::vector<int64_t> restored;
    for (const int64_t slot : reads[i]) {
      if (channelsLast[slot]) restored.push_back(slot);
    }
    if (isConv2d(layer) && steps[i]) {
      steps[i] = readingChannelsLast(std::move(steps[i]), NodeArgs(node, i).tensor(1));
      channelsLast[i] = true;
    } else if (takesAnyFormat(node, layer)) {
      channelsLast[i] = !restored.empty();
    } else if (!restored.empty() && steps[i]) {
      steps[i] = readingContiguous(std::move(steps[i]), std::move(restored));
    }
  }
}

}  // namespace firebrand
