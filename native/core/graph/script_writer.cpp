#include "core/graph/script_writer.h"

#include <torch/script.h>

#include "core/errors.h"

namespace firebrand {
namespace {

std::string attributeName(const std::string& stateName) {
  std::string name = "l" + stateName;
  for (char& c : name) {
    if (c == '.') c = '_';
  }
  return name;
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
    if (parameter)
      out_.register_parameter(it->second, copy, false);
    else
      out_.register_buffer(it->second, copy);
  };
  for (const auto& item : root.named_parameters()) add(item.key(), item.value(), true);
  for (const auto& item : root.named_buffers()) add(item.key(), item.value(), false);
}

std::string ScriptWriter::tensor(const std::string& stateName) const {
  const auto it = attributes_.find(stateName);
  return it == attributes_.end() ? "None" : "self." + it->second;
}

void ScriptWriter::save(const std::string& source, const std::string& path) {
  out_.define(source);
  try {
    out_.save(path);
  } catch (const c10::Error& error) {
    throw FileError(path + ": cannot write the TorchScript module (" + error.what_without_backtrace() + ")");
  }
}

}  // namespace firebrand
