#include "core/model/torchscript_export.h"

#include <torch/nn/modules.h>
#include <torch/script.h>

#include <sstream>

#include "core/compat/torch_compat.h"
#include "core/errors.h"
#include "core/model/sequential_model.h"

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

std::string number(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  std::string text = out.str();
  return text.find_first_of(".e") == std::string::npos ? text + ".0" : text;
}

std::string boolean(bool value) { return value ? "True" : "False"; }

// The concrete module behind an AnyModule (AnyModule::get fails for BatchNorm, whose forward is in a base).
template <typename Impl>
const Impl& as(const torch::nn::AnyModule& module) {
  return *std::dynamic_pointer_cast<Impl>(module.ptr());
}

// One layer's expression on `x`, using `self.<attr>` for its tensors ("None" when absent).
class LayerWriter {
 public:
  LayerWriter(const torch::nn::Module& root, size_t index) : root_(root), prefix_(std::to_string(index) + ".") {}

  std::string tensor(const std::string& name) const {
    const std::string key = prefix_ + name;
    const bool present = root_.named_parameters().contains(key) || root_.named_buffers().contains(key);
    return present ? "self." + attributeName(key) : "None";
  }

  std::string expression(const LayerSpec& spec, const torch::nn::AnyModule& module) const {
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
             list(options.padding()) + ", " + list(options.dilation()) + ", " + boolean(options.ceil_mode()) + ")";
    }
    if (type == "avgPool2d") {
      const auto& options = as<torch::nn::AvgPool2dImpl>(module).options;
      return "torch.avg_pool2d(x, " + list(options.kernel_size()) + ", " + list(options.stride()) + ", " +
             list(options.padding()) + ", " + boolean(options.ceil_mode()) + ", " +
             boolean(options.count_include_pad()) + ")";
    }
    if (type == "batchNorm1d" || type == "batchNorm2d") {
      const auto& options = type == "batchNorm1d" ? as<torch::nn::BatchNorm1dImpl>(module).options
                                                  : as<torch::nn::BatchNorm2dImpl>(module).options;
      return "torch.batch_norm(x, " + tensor("weight") + ", " + tensor("bias") + ", " + tensor("running_mean") +
             ", " + tensor("running_var") + ", " +
             (options.track_running_stats() ? "self.training" : "True") + ", " + number(options.momentum().value_or(0.1)) +
             ", " + number(options.eps()) + ", False)";
    }
    if (type == "layerNorm") {
      const auto& options = as<torch::nn::LayerNormImpl>(module).options;
      return "torch.layer_norm(x, " + list(options.normalized_shape()) + ", " + tensor("weight") + ", " +
             tensor("bias") + ", " + number(options.eps()) + ")";
    }
    if (type == "dropout") {
      return "torch.dropout(x, " + number(as<torch::nn::DropoutImpl>(module).options.p()) + ", self.training)";
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
    throw InvalidState("exportTorchScript: no TorchScript form for layer type '" + type + "'");
  }

 private:
  const torch::nn::Module& root_;
  std::string prefix_;
};

}  // namespace

void exportSequential(const SequentialModel& model, const std::string& path) {
  const torch::nn::Module& root = model.module();
  torch::jit::Module out("FirebrandSequential");
  out.register_attribute("training", c10::BoolType::get(), false);
  for (const auto& item : root.named_parameters()) {
    out.register_parameter(attributeName(item.key()), item.value().detach().to(at::kCPU, /*non_blocking=*/false, /*copy=*/true), false);
  }
  for (const auto& item : root.named_buffers()) {
    out.register_buffer(attributeName(item.key()), item.value().detach().to(at::kCPU, /*non_blocking=*/false, /*copy=*/true));
  }
  std::string source = "def forward(self, x):\n";
  for (size_t index = 0; index < model.spec().size(); ++index) {
    const LayerWriter writer(root, index);
    source += "    x = " + writer.expression(model.spec()[index], model.layerModule(index)) + "\n";
  }
  source += "    return x\n";
  out.define(source);
  try {
    out.save(path);
  } catch (const c10::Error& error) {
    throw FileError(path + ": cannot write the TorchScript module (" + error.what_without_backtrace() + ")");
  }
}

}  // namespace firebrand
