#include "core/model/sequential_model.h"

#include "core/errors.h"
#include "core/shape_text.h"

namespace firebrand {

SequentialModel::SequentialModel(const ModelSpec& spec) {
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
    register_module(std::to_string(index), built.module.ptr());
    layers_.push_back({owner, std::move(built)});
  }
}

torch::Tensor SequentialModel::forward(torch::Tensor input) {
  for (auto& layer : layers_) {
    try {
      input = layer.built.module.forward(input);
    } catch (const c10::Error& error) {
      throw ShapeMismatch(layer.owner + " cannot take an input of shape " + shapeAndDtypeText(input) +
                          "; it expects " + layer.built.expectedInput +
                          ". libtorch: " + error.what_without_backtrace());
    }
  }
  return input;
}

int64_t SequentialModel::parameterCount() const {
  int64_t count = 0;
  for (const auto& parameter : parameters()) count += parameter.numel();
  return count;
}

}  // namespace firebrand
