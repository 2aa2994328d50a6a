#include "core/model/script_model.h"

#include <torch/csrc/jit/runtime/graph_executor.h>

#include <fstream>

#include "core/errors.h"
#include "core/io/input_file.h"
#include "core/model/submodule_modes.h"

namespace firebrand {
namespace {

// What forward's signature says it returns: one tensor, or a tuple of tensors.
OutputLayout outputLayoutOf(const torch::jit::Module& module, const std::string& origin) {
  const auto forward = module.find_method("forward");
  if (!forward) return {};
  const auto& returns = forward->function().getSchema().returns();
  if (returns.size() != 1) return {};
  const c10::TypePtr& type = returns[0].type();
  if (type->kind() == c10::TypeKind::DictType) {
    throw InvalidArgument(origin + ": forward returns a " + type->annotation_str() +
                          "; a TorchScript forward must return a Tensor or a tuple of Tensors (a Dict's keys are only "
                          "known once it runs)");
  }
  const auto tuple = type->cast<c10::TupleType>();
  if (!tuple) return {};
  std::vector<std::string> names;
  for (const auto& element : tuple->elements()) {
    if (element->kind() != c10::TypeKind::TensorType) {
      throw InvalidArgument(origin + ": forward returns " + type->annotation_str() +
                            "; a tuple it returns must hold only Tensors");
    }
    names.push_back(std::to_string(names.size()));
  }
  return OutputLayout(OutputLayout::Kind::Array, std::move(names));
}

}  // namespace

ScriptModel::ScriptModel(torch::jit::Module module, std::string origin)
    : module_(std::move(module)),
      origin_(std::move(origin)),
      outputLayout_(outputLayoutOf(module_, origin_)),
      hasTrainingStep_(module_.find_method("training_step").has_value()),
      hasValidationStep_(module_.find_method("validation_step").has_value()) {}

std::shared_ptr<ScriptModel> ScriptModel::load(const std::string& path) {
  checkInputFile(path, "TorchScript file");
  if (!std::ifstream(path).good()) throw FileError(path + ": cannot open TorchScript file");
  try {
    return std::shared_ptr<ScriptModel>(new ScriptModel(torch::jit::load(path), path));
  } catch (const c10::Error& error) {
    throw FileError(path + ": not a TorchScript module saved by torch.jit.save (" + error.what_without_backtrace() +
                    ")");
  }
}

std::shared_ptr<ScriptModel> ScriptModel::define(const std::string& source,
                                                 const std::vector<NamedTensor>& parameters) {
  torch::jit::Module module("FirebrandScript");
  // nn.Module's flag, read by train()/eval() and by `self.training` in the source.
  module.register_attribute("training", c10::BoolType::get(), true);
  for (const auto& parameter : parameters) {
    if (parameter.name.empty() || parameter.name.find('.') != std::string::npos) {
      throw InvalidArgument("script model: parameter name '" + parameter.name +
                            "' must be a non-empty identifier without dots");
    }
    module.register_parameter(parameter.name, parameter.value.to(at::kFloat).detach().requires_grad_(), false);
  }
  try {
    module.define(source);
  } catch (const std::exception& error) {  // the compiler throws torch::jit::ErrorReport
    throw InvalidArgument(std::string("script model: the TorchScript source does not compile: ") + error.what());
  }
  return std::shared_ptr<ScriptModel>(new ScriptModel(std::move(module), "TorchScript source"));
}

at::Tensor ScriptModel::forward(const at::Tensor& inputs) { return forwardAll(inputs)[selectedOutput_]; }

std::vector<at::Tensor> ScriptModel::forwardAll(const at::Tensor& inputs) {
  if (!module_.find_method("forward")) {
    throw InvalidState(origin_ + ": the module has no forward method");
  }
  const torch::jit::GraphOptimizerEnabledGuard unoptimized(false);
  const c10::IValue output = module_.forward({inputs});
  if (output.isTensor()) return {output.toTensor()};
  if (output.isTuple() && outputLayout_.kind == OutputLayout::Kind::Array) {
    std::vector<at::Tensor> outputs;
    for (const auto& element : output.toTupleRef().elements()) outputs.push_back(element.toTensor());
    return outputs;
  }
  throw InvalidArgument(origin_ + ": forward must return a Tensor or a tuple of Tensors, it returned " +
                        output.tagKind());
}

torch::OrderedDict<std::string, at::Tensor> ScriptModel::namedParameters() const {
  torch::OrderedDict<std::string, at::Tensor> named;
  for (const auto& item : module_.named_parameters(/*recurse=*/true)) named.insert(item.name, item.value);
  return named;
}

torch::OrderedDict<std::string, at::Tensor> ScriptModel::namedBuffers() const {
  torch::OrderedDict<std::string, at::Tensor> named;
  for (const auto& item : module_.named_buffers(/*recurse=*/true)) named.insert(item.name, item.value);
  return named;
}

void ScriptModel::saveTorchScript(const std::string& path) const {
  try {
    module_.save(path);
  } catch (const c10::Error& error) {
    throw FileError(path + ": cannot write the TorchScript module (" + error.what_without_backtrace() + ")");
  }
}

OnnxGraph ScriptModel::onnxGraph(const TensorDict&, const OnnxExportOptions&) {
  throw NotExportable(
      "exportOnnx: the model is TorchScript source (a .pt module), which libtorch runs in its interpreter; firebrand "
      "has no op-by-op graph of it to write as ONNX. Export it where it was written, with PyTorch's "
      "torch.onnx.export, or describe the model as TypeScript modules (nn.Module, or a pretrained architecture) and "
      "load these weights into it (loadWeights), which exportOnnx can write");
}

TensorDict ScriptModel::callStep(const char* method, const TensorDict& batch) {
  c10::Dict<std::string, at::Tensor> fields;
  for (const auto& [name, tensor] : batch) fields.insert(name, tensor);
  const torch::jit::GraphOptimizerEnabledGuard unoptimized(false);
  const c10::IValue result = module_.get_method(method)({fields});
  const std::string expected = std::string(method) + " must return a Dict[str, Tensor]";
  if (!result.isGenericDict()) throw InvalidArgument(origin_ + ": " + expected + ", it returned " + result.tagKind());
  TensorDict values;
  for (const auto& entry : result.toGenericDict()) {
    if (!entry.key().isString() || !entry.value().isTensor()) throw InvalidArgument(origin_ + ": " + expected);
    values[entry.key().toStringRef()] = entry.value().toTensor();
  }
  return values;
}

TensorDict ScriptModel::trainingStep(const TensorDict& batch) { return callStep("training_step", batch); }

TensorDict ScriptModel::validationStep(const TensorDict& batch) { return callStep("validation_step", batch); }

void ScriptModel::setModelTraining(bool training) { module_.train(training); }

std::vector<std::string> ScriptModel::modulePaths() const { return submodulePaths(module_); }

void ScriptModel::setModulesTraining(const std::vector<std::string>& paths, bool training) {
  setSubmodulesTraining(module_, paths, training);
}

}  // namespace firebrand
