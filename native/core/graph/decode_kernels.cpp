#include "core/graph/decode_kernels.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <atomic>

#include "core/graph/decode_cache.h"
#include "core/nn/linear_layer.h"
#include "core/nn/lora.h"
#include "core/runtime/inference_run.h"
#include "core/runtime/kernel_settings.h"

namespace firebrand {
namespace {

// LlamaDecoderLayer's layers under its path, in LlamaLayerWeights' order.
constexpr const char* kLayerNames[] = {"input_layernorm",  "self_attn.q_proj", "self_attn.k_proj",
                                       "self_attn.v_proj", "self_attn.o_proj", "post_attention_layernorm",
                                       "mlp.gate_proj",    "mlp.up_proj",      "mlp.down_proj"};

std::atomic<int64_t> kernelSteps{0};

bool under(const std::string& scope, const std::string& path) {
  return scope == path || scope.compare(0, path.size() + 1, path + ".") == 0;
}

at::Tensor floatCopy(const at::Tensor& t) { return t.defined() ? t.detach().to(at::kFloat).contiguous() : t; }

bool normWeight(const TreeLayer& layer, at::Tensor& weight) {
  const auto* found = layer.built.module.ptr()->named_parameters(false).find("weight");
  if (!found || layer.built.lora) return false;
  weight = found->detach();
  return true;
}

bool linearWeights(const TreeLayer& layer, DecodeLinear& linear) {
  const auto module = std::dynamic_pointer_cast<LinearLayerImpl>(layer.built.module.ptr());
  if (!module) return false;
  linear = {module->weight.detach(), floatCopy(module->weightScale), floatCopy(module->bias)};
  if (const auto& adapter = layer.built.lora) {
    if (adapter->magnitude.defined()) return false;  // DoRA rescales rows: the graph's ops run it
    linear.loraA = adapter->aWeight.detach();
    linear.loraB = adapter->bWeight.detach();
    linear.loraScaling = adapter->scaling;
  }
  return true;
}

}  // namespace

DecodeKernels::DecodeKernels(const GraphSpec& graph, const std::vector<std::vector<int64_t>>& reads, ModuleTree& tree)
    : startAt_(graph.nodes.size(), -1) {
  // FIREBRAND_DECODE_KERNELS=0 runs the calls' ops instead, read as each model is built: for comparisons.
  if (kernelSetting("FIREBRAND_DECODE_KERNELS") == "0") return;
  const auto nodes = static_cast<int64_t>(graph.nodes.size());
  for (const DecodeKernelCall& spec : graph.decodeKernels) {
    if (spec.kind != "llamaDecoderLayer" || spec.output < 0 || spec.output >= nodes || spec.inputs.size() < 3) continue;
    Call call{0, static_cast<size_t>(spec.output) + 1, spec.module, spec.inputs, spec.output};
    call.begin = call.end;
    while (call.begin > 0 && under(graph.nodes[call.begin - 1].scope, spec.module)) --call.begin;
    call.inputs.resize(4, -1);
    const bool inputsBefore = std::all_of(call.inputs.begin(), call.inputs.end(),
                                          [&](int64_t input) { return input < static_cast<int64_t>(call.begin); });
    // Only the output may be read after the call: the kernel computes nothing else.
    bool sealed = std::none_of(graph.outputs.begin(), graph.outputs.end(), [&](int64_t output) {
      return output >= static_cast<int64_t>(call.begin) && output < spec.output;
    });
    for (size_t node = call.end; node < graph.nodes.size() && sealed; ++node) {
      for (const int64_t read : reads[node]) {
        if (read >= static_cast<int64_t>(call.begin) && read < spec.output) sealed = false;
      }
    }
    int attentions = 0;
    for (size_t node = call.begin; node < call.end; ++node) {
      const std::string& op = graph.nodes[node].op;
      if (op == "scaledDotProductAttention" || op == "slidingWindowAttention") {
        call.attentionNode = node;
        ++attentions;
      }
    }
    for (const char* name : kLayerNames) {
      const auto layer = tree.layers.find(spec.module + "." + name);
      if (layer != tree.layers.end()) call.layers.push_back(&layer->second);
    }
    if (!inputsBefore || call.inputs[0] < 0 || call.inputs[1] < 0 || call.inputs[2] < 0 || !sealed || attentions != 1 ||
        call.layers.size() != std::size(kLayerNames) || startAt_[call.begin] >= 0)
      continue;
    call.shape = {spec.heads, spec.kvHeads, spec.headDim, spec.eps, spec.window};
    startAt_[call.begin] = static_cast<int64_t>(calls_.size());
    calls_.push_back(std::move(call));
  }
}

bool DecodeKernels::resolve(const Call& call, LlamaLayerWeights& w) const {
  const auto& l = call.layers;
  return normWeight(*l[0], w.inputNorm) && linearWeights(*l[1], w.q) && linearWeights(*l[2], w.k) &&
         linearWeights(*l[3], w.v) && linearWeights(*l[4], w.o) && normWeight(*l[5], w.postAttentionNorm) &&
         linearWeights(*l[6], w.gate) && linearWeights(*l[7], w.up) && linearWeights(*l[8], w.down);
}

bool DecodeKernels::run(size_t index, GraphFrame& frame) const {
  DecodeCache* cache = frame.cache;
  if (!cache || cache->fresh != 1 || frame.training || at::GradMode::is_enabled() || !inInferenceRun()) return false;
  const Call& call = calls_[index];
  KernelDecodeState& state = cache->kernels[call.begin];
  if (!state.resolved) {
    state.resolved = true;
    state.fits = resolve(call, state.weights);
  }
  const auto value = [&](int64_t node) { return frame.values[node].toTensor(); };
  const at::Tensor x = value(call.inputs[0]), cos = value(call.inputs[1]), sin = value(call.inputs[2]);
  const std::optional<at::Tensor> mask =
      call.inputs[3] >= 0 ? std::optional<at::Tensor>(value(call.inputs[3])) : std::nullopt;
  LayerKeyValues& held = state.keyValues;
  if (!state.fits || !llamaDecodeFits(x, cos, sin, mask, state.weights, call.shape)) {
    if (held.keys.defined())
      throw NotIncremental(call.path + ": the decoding kernel holds the keys and values, and cannot take " +
                           "this step's inputs");
    return false;
  }
  if (!held.keys.defined()) {
    const auto entry = cache->entries.find(call.attentionNode);
    if (entry != cache->entries.end() && entry->second.size() >= 2) {
      adoptKeyValues(entry->second[0], entry->second[1], call.shape, held);
      cache->entries.erase(entry);
    }
  }
  if (mask && mask->size(3) != held.length + 1)
    throw NotIncremental(call.path + ": the attention mask covers " + std::to_string(mask->size(3)) +
                         " positions, not the " + std::to_string(held.length + 1) + " held and new ones");
  frame.values[call.output] = llamaDecodeLayer(x, cos, sin, mask, state.weights, call.shape, held);
  ++kernelSteps;
  return true;
}

int64_t decodeKernelSteps() { return kernelSteps.load(); }

}  // namespace firebrand
