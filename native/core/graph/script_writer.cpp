#include "core/graph/script_writer.h"

#include <torch/nn/modules.h>
#include <torch/script.h>

#include <functional>
#include <limits>
#include <sstream>

#include "core/compat/torch_compat.h"
#include "core/errors.h"
#include "core/options/resolved_options.h"

namespace firebrand {
namespace {

std::string attributeName(const std::string& stateName) {
  std::string name = "l" + stateName;
  for (char& c : name) {
    if (c == '.') c = '_';
  }
  return name;
}

template <size_t N>
std::string list(const torch::ExpandingArray<N>& values) {
  std::string out = "[";
  for (size_t i = 0; i < N; ++i) out += (i ? ", " : "") + std::to_string((*values)[i]);
  return out + "]";
}

std::string list(const std::vector<int64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

// The concrete module behind an AnyModule (AnyModule::get fails for BatchNorm, whose forward is in a base).
template <typename Impl>
const Impl& as(const torch::nn::AnyModule& module) {
  return *std::dynamic_pointer_cast<Impl>(module.ptr());
}

using TensorName = std::function<std::string(const std::string&)>;

std::string ints(ResolvedOptions& options, const char* name, size_t count) { return list(options.integers(name, count)); }

// The layers after the first seventeen, from their resolved options.
std::string newLayer(const LayerSpec& spec, const TensorName& tensor) {
  ResolvedOptions o("exportTorchScript: " + spec.type, spec.options);
  const std::string& type = spec.type;
  const auto conv = [&](const char* op, size_t n) {
    return std::string(op) + "(x, " + tensor("weight") + ", " + tensor("bias") + ", " + ints(o, "stride", n) + ", " +
           ints(o, "padding", n) + ", " + ints(o, "dilation", n) + ", " + std::to_string(o.integer("groups")) + ")";
  };
  const auto convTranspose = [&](const char* op, size_t n) {
    return std::string(op) + "(x, " + tensor("weight") + ", " + tensor("bias") + ", " + ints(o, "stride", n) + ", " +
           ints(o, "padding", n) + ", " + ints(o, "outputPadding", n) + ", " + std::to_string(o.integer("groups")) + ", " +
           ints(o, "dilation", n) + ")";
  };
  if (type == "conv1d") return conv("torch.conv1d", 1);
  if (type == "conv3d") return conv("torch.conv3d", 3);
  if (type == "convTranspose1d") return convTranspose("torch.conv_transpose1d", 1);
  if (type == "convTranspose2d") return convTranspose("torch.conv_transpose2d", 2);
  if (type == "maxPool1d") {
    return "torch.max_pool1d(x, " + ints(o, "kernelSize", 1) + ", " + ints(o, "stride", 1) + ", " + ints(o, "padding", 1) + ", " +
           ints(o, "dilation", 1) + ", " + scriptBool(o.flag("ceilMode")) + ")";
  }
  if (type == "avgPool1d") {
    return "torch.avg_pool1d(x, " + ints(o, "kernelSize", 1) + ", " + ints(o, "stride", 1) + ", " + ints(o, "padding", 1) + ", " +
           scriptBool(o.flag("ceilMode")) + ", " + scriptBool(o.flag("countIncludePad")) + ")";
  }
  if (type == "adaptiveAvgPool1d") return "torch.adaptive_avg_pool1d(x, " + ints(o, "outputSize", 1) + ")";
  if (type == "adaptiveAvgPool2d") return "torch.adaptive_avg_pool2d(x, " + ints(o, "outputSize", 2) + ")";
  if (type == "adaptiveMaxPool2d") return "torch.adaptive_max_pool2d(x, " + ints(o, "outputSize", 2) + ")[0]";
  if (type == "batchNorm3d") {
    return "torch.batch_norm(x, " + tensor("weight") + ", " + tensor("bias") + ", " + tensor("running_mean") + ", " +
           tensor("running_var") + ", " + (o.flag("trackRunningStats") ? "self.training" : "True") + ", " +
           scriptNumber(o.number("momentum")) + ", " + scriptNumber(o.number("eps")) + ", False)";
  }
  if (type == "groupNorm") {
    return "torch.group_norm(x, " + std::to_string(o.integer("numGroups")) + ", " + tensor("weight") + ", " + tensor("bias") + ", " +
           scriptNumber(o.number("eps")) + ")";
  }
  if (type == "instanceNorm2d") {
    const bool tracked = o.flag("trackRunningStats");
    return "torch.instance_norm(x, " + tensor("weight") + ", " + tensor("bias") + ", " + tensor("running_mean") + ", " +
           tensor("running_var") + ", " + (tracked ? "self.training" : "True") + ", " + scriptNumber(o.number("momentum")) + ", " +
           scriptNumber(o.number("eps")) + ", False)";
  }
  if (type == "rmsNorm") {
    const auto shape = o.integers("normalizedShape");
    std::vector<int64_t> dims;
    for (size_t i = 0; i < shape.size(); ++i) dims.push_back(-1 - static_cast<int64_t>(i));
    // Unset: float32's machine epsilon (exports are float32).
    const std::string eps = scriptNumber(o.has("eps") ? o.number("eps") : std::numeric_limits<float>::epsilon());
    const std::string scaled = "x * torch.rsqrt(x.pow(2).mean(" + list(dims) + ", keepdim=True) + " + eps + ")";
    return o.flag("elementwiseAffine") ? scaled + " * " + tensor("weight") : scaled;
  }
  if (type == "dropout2d") return "torch.feature_dropout(x, " + scriptNumber(o.number("p")) + ", self.training)";
  if (type == "identity") return "x";
  if (type == "upsample") {
    const bool nearest = o.text("mode") == "nearest";
    const std::string size = o.has("size") ? ints(o, "size", 2) : "None";
    const std::string scale = o.has("scaleFactor") ? scriptNumber(o.number("scaleFactor")) : "None";
    return scriptInterpolate("x", size, scale, nearest, scriptBool(o.flag("alignCorners")));
  }
  if (type == "pixelShuffle") return "torch.pixel_shuffle(x, " + std::to_string(o.integer("upscaleFactor")) + ")";
  if (type == "unflatten") return "x.unflatten(" + std::to_string(o.integer("dim")) + ", " + ints(o, "unflattenedSize", 0) + ")";
  if (type == "leakyRelu") return "torch.leaky_relu(x, " + scriptNumber(o.number("negativeSlope")) + ")";
  if (type == "elu") return "torch.elu(x, " + scriptNumber(o.number("alpha")) + ")";
  if (type == "softplus") {
    return "torch.softplus(x, " + scriptNumber(o.number("beta")) + ", " + scriptNumber(o.number("threshold")) + ")";
  }
  if (type == "silu" || type == "mish" || type == "hardswish") return "torch." + type + "(x)";
  if (type == "relu6") return "torch.hardtanh(x, 0.0, 6.0)";
  if (type == "hardsigmoid") return "torch.hardsigmoid(x)";
  if (type == "hardtanh") return "torch.hardtanh(x, " + scriptNumber(o.number("minVal")) + ", " + scriptNumber(o.number("maxVal")) + ")";
  if (type == "prelu") return "torch.prelu(x, " + tensor("weight") + ")";
  throw InvalidState("exportTorchScript: no TorchScript form for layer type '" + type + "'");
}

}  // namespace

ScriptWriter::ScriptWriter(const torch::nn::Module& root, const std::string& className) : out_(className) {
  out_.register_attribute("training", c10::BoolType::get(), false);
  // A tied tensor (held under several names) is one attribute, named by its first name.
  std::map<const c10::TensorImpl*, std::string> registered;
  const auto add = [&](const std::string& name, const at::Tensor& value, bool parameter) {
    const auto [it, isNew] = registered.emplace(value.unsafeGetTensorImpl(), attributeName(name));
    attributes_[name] = it->second;
    if (!isNew) return;
    const at::Tensor copy = value.detach().to(at::kCPU, /*non_blocking=*/false, /*copy=*/true);
    if (parameter) out_.register_parameter(it->second, copy, false);
    else out_.register_buffer(it->second, copy);
  };
  for (const auto& item : root.named_parameters()) add(item.key(), item.value(), true);
  for (const auto& item : root.named_buffers()) add(item.key(), item.value(), false);
}

std::string ScriptWriter::tensor(const std::string& stateName) const {
  const auto it = attributes_.find(stateName);
  return it == attributes_.end() ? "None" : "self." + it->second;
}

std::string ScriptWriter::recurrent(const LayerSpec& spec, const torch::nn::AnyModule& module, const std::string& path,
                                    const std::string& x, const std::string& h0, const std::string& c0, const std::string& lengths) const {
  ResolvedOptions o("exportTorchScript: " + spec.type, spec.options);
  std::string weights;
  for (const auto& name : module.ptr()->named_parameters(/*recurse=*/false).keys()) weights += (weights.empty() ? "" : ", ") + tensor(path + "." + name);
  const bool batchFirst = o.flag("batchFirst");
  const int64_t states = o.integer("numLayers") * (o.flag("bidirectional") ? 2 : 1);
  // PyTorch's zero initial state: [layers * directions, batch, size] (an unbatched input has no batch dimension).
  const auto zeros = [&](int64_t size) {
    const std::string sizes = "[" + std::to_string(states) + ", " + x + ".size(" + (batchFirst ? "0" : "1") + "), " + std::to_string(size) + "]";
    return "torch.zeros(" + sizes + " if " + x + ".dim() == 3 else [" + std::to_string(states) + ", " + std::to_string(size) +
           "], dtype=" + x + ".dtype, device=" + x + ".device)";
  };
  const int64_t hidden = o.integer("hiddenSize");
  const int64_t projected = spec.type == "lstm" ? o.integer("projSize") : 0;  // only an LSTM projects h
  const std::string firstState = h0 == "None" ? zeros(projected > 0 ? projected : hidden) : h0;
  const std::string state = spec.type == "lstm" ? "[" + firstState + ", " + (c0 == "None" ? zeros(hidden) : c0) + "]" : firstState;
  const std::string function = spec.type == "lstm" ? "lstm"
                               : spec.type == "gru" ? "gru"
                               : o.text("nonlinearity") == "relu" ? "rnn_relu"
                                                                  : "rnn_tanh";
  const std::string flags = scriptBool(o.flag("bias")) + ", " + std::to_string(o.integer("numLayers")) + ", " + scriptNumber(o.number("dropout"));
  if (lengths != "None") {
    return "self._packed_recurrent('" + function + "', " + x + ", " + (spec.type == "lstm" ? state : "[" + state + "]") + ", [" + weights +
           "], " + lengths + ", " + flags + ", " + scriptBool(o.flag("bidirectional")) + ", " + scriptBool(batchFirst) + ")";
  }
  return "torch." + function + "(" + x + ", " + state + ", [" + weights + "], " + flags + ", self.training, " +
         scriptBool(o.flag("bidirectional")) + ", " + scriptBool(batchFirst) + ")";
}

void ScriptWriter::save(const std::string& source, const std::string& path) {
  out_.define(source);
  try {
    out_.save(path);
  } catch (const c10::Error& error) {
    throw FileError(path + ": cannot write the TorchScript module (" + error.what_without_backtrace() + ")");
  }
}

std::string ScriptWriter::layer(const LayerSpec& spec, const torch::nn::AnyModule& module, const std::string& path) const {
  const std::string prefix = path.empty() ? "" : path + ".";
  const auto tensor = [&](const std::string& name) { return this->tensor(prefix + name); };
    const std::string& type = spec.type;
    if (type == "linear") return "torch.linear(x, " + tensor("weight") + ", " + tensor("bias") + ")";
    if (type == "conv2d") {
      const auto& options = as<torch::nn::Conv2dImpl>(module).options;
      const auto* padding = compat::variantAlternative<torch::ExpandingArray<2>>(options.padding());
      if (!padding) throw InvalidState("exportTorchScript: conv2d padding must be numeric");
      return "torch.conv2d(x, " + tensor("weight") + ", " + tensor("bias") + ", " + list(options.stride()) + ", " +
             list(*padding) + ", " + list(options.dilation()) + ", " + std::to_string(options.groups()) + ")";
    }
    if (type == "maxPool2d") {
      const auto& options = as<torch::nn::MaxPool2dImpl>(module).options;
      return "torch.max_pool2d(x, " + list(options.kernel_size()) + ", " + list(options.stride()) + ", " +
             list(options.padding()) + ", " + list(options.dilation()) + ", " + scriptBool(options.ceil_mode()) + ")";
    }
    if (type == "avgPool2d") {
      const auto& options = as<torch::nn::AvgPool2dImpl>(module).options;
      return "torch.avg_pool2d(x, " + list(options.kernel_size()) + ", " + list(options.stride()) + ", " +
             list(options.padding()) + ", " + scriptBool(options.ceil_mode()) + ", " +
             scriptBool(options.count_include_pad()) + ")";
    }
    if (type == "batchNorm1d" || type == "batchNorm2d") {
      const auto& options = type == "batchNorm1d" ? as<torch::nn::BatchNorm1dImpl>(module).options
                                                  : as<torch::nn::BatchNorm2dImpl>(module).options;
      return "torch.batch_norm(x, " + tensor("weight") + ", " + tensor("bias") + ", " + tensor("running_mean") +
             ", " + tensor("running_var") + ", " +
             (options.track_running_stats() ? "self.training" : "True") + ", " + scriptNumber(options.momentum().value_or(0.1)) +
             ", " + scriptNumber(options.eps()) + ", False)";
    }
    if (type == "layerNorm") {
      const auto& options = as<torch::nn::LayerNormImpl>(module).options;
      return "torch.layer_norm(x, " + list(options.normalized_shape()) + ", " + tensor("weight") + ", " +
             tensor("bias") + ", " + scriptNumber(options.eps()) + ")";
    }
    if (type == "dropout") {
      return "torch.dropout(x, " + scriptNumber(as<torch::nn::DropoutImpl>(module).options.p()) + ", self.training)";
    }
    if (type == "flatten") {
      const auto& options = as<torch::nn::FlattenImpl>(module).options;
      return "torch.flatten(x, " + std::to_string(options.start_dim()) + ", " + std::to_string(options.end_dim()) + ")";
    }
    if (type == "relu") return "torch.relu(x)";
    if (type == "tanh") return "torch.tanh(x)";
    if (type == "sigmoid") return "torch.sigmoid(x)";
    if (type == "gelu") {
      return "torch.gelu(x, approximate='" + as<torch::nn::GELUImpl>(module).options.approximate() + "')";
    }
    if (type == "softmax") return "torch.softmax(x, " + std::to_string(as<torch::nn::SoftmaxImpl>(module).options.dim()) + ")";
    if (type == "logSoftmax") {
      return "torch.log_softmax(x, " + std::to_string(as<torch::nn::LogSoftmaxImpl>(module).options.dim()) + ")";
    }
    if (type == "embedding") {
      const auto padding = as<torch::nn::EmbeddingImpl>(module).options.padding_idx();
      return "torch.embedding(" + tensor("weight") + ", x, " + std::to_string(padding.value_or(-1)) + ", False, False)";
    }
  return newLayer(spec, tensor);
}

}  // namespace firebrand
