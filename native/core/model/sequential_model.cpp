#include "core/model/sequential_model.h"

#include "core/errors.h"
#include "core/model/torchscript_export.h"
#include "core/shape_text.h"

namespace firebrand {

SequentialModel::SequentialModel(const ModelSpec& spec)
    : spec_(spec), module_(std::make_shared<torch::nn::Module>("Sequential")) {
  if (spec.empty()) throw InvalidArgument("model: a sequential model needs at least one layer");
  layers_.reserve(spec.size());
  for (size_t index = 0; index < spec.size(); ++index) {
    const std::string owner = "layers[" + std::to_string(index) + "] (" + spec[index].type + ")";
    BuiltLayer built;
    try {
      built = buildLayer(spec[index], owner);
    } catch (const c10::Error&) {
      rethrowWithContext(owner);  // allocation failures while creating the weights
    }
    module_->register_module(std::to_string(index), built.module.ptr());
    layers_.push_back({owner, std::move(built)});
  }
}

at::Tensor SequentialModel::forward(const at::Tensor& input) {
  at::Tensor x = input;
  for (auto& layer : layers_) {
    try {
      x = layer.built.module.forward(x);
    } catch (const c10::Error& error) {
      // libtorch says "mat1 and mat2 must have the same dtype": name the dtype, not the shape.
      const auto parameters = layer.built.module.ptr()->parameters();
      if (!x.is_floating_point() && !parameters.empty() && parameters.front().is_floating_point()) {
        throw InvalidArgument(layer.owner + " takes floating-point inputs but got " + shapeAndDtypeText(x) +
                              " (its weights are " + dtypeText(parameters.front().scalar_type()) +
                              "): give the inputs as a Float32Array, or convert them with transforms.cast({ dtype: 'float32' })");
      }
      throw ShapeMismatch(layer.owner + " cannot take an input of shape " + shapeAndDtypeText(x) +
                          "; it expects " + layer.built.expectedInput +
                          ". libtorch: " + error.what_without_backtrace());
    }
  }
  return x;
}

torch::OrderedDict<std::string, at::Tensor> SequentialModel::namedParameters() const {
  return module_->named_parameters();
}

void SequentialModel::saveTorchScript(const std::string& path) const { exportSequential(*this, path); }

}  // namespace firebrand
