#include "core/nn/layer_ties.h"

#include <torch/nn.h>

#include <type_traits>

#include "core/errors.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

// torch::nn::Module keeps registered parameters in a protected dictionary and
// refuses to register a name twice; a tie replaces the entry in place.
struct RegisteredParameters : torch::nn::Module {
  static torch::OrderedDict<std::string, at::Tensor>& of(torch::nn::Module& module) {
    return module.*(&RegisteredParameters::parameters_);
  }
};

template <typename Impl>
bool assignMember(torch::nn::Module& module, const std::string& name, const at::Tensor& tensor) {
  auto* layer = dynamic_cast<Impl*>(&module);
  if (!layer) return false;
  if constexpr (std::is_same_v<Impl, torch::nn::EmbeddingImpl>) {
    layer->weight = tensor;  // its only parameter (tieLayerTensor checked the name is registered)
  } else {
    (name == "weight" ? layer->weight : layer->bias) = tensor;
  }
  return true;
}

// The layers whose forward reads public `weight` and `bias` members.
bool assignAnyMember(torch::nn::Module& module, const std::string& name, const at::Tensor& tensor) {
  using namespace torch::nn;
  return assignMember<LinearImpl>(module, name, tensor) || assignMember<EmbeddingImpl>(module, name, tensor) ||
         assignMember<Conv1dImpl>(module, name, tensor) || assignMember<Conv2dImpl>(module, name, tensor) ||
         assignMember<Conv3dImpl>(module, name, tensor) || assignMember<ConvTranspose1dImpl>(module, name, tensor) ||
         assignMember<ConvTranspose2dImpl>(module, name, tensor) || assignMember<LayerNormImpl>(module, name, tensor);
}

}  // namespace

void tieLayerTensor(BuiltLayer& layer, const std::string& name, const at::Tensor& tensor, const std::string& owner,
                    const std::string& source) {
  torch::nn::Module& module = *layer.module.ptr();
  auto& parameters = RegisteredParameters::of(module);
  const at::Tensor* own = parameters.find(name);
  const std::string what = owner + ": " + name + " tied to '" + source + "'";
  if (name != "weight" && name != "bias") throw InvalidArgument(what + ": only a layer's weight or bias can be tied");
  if (!own || !own->defined()) throw InvalidArgument(what + ": the layer has no " + name);
  if (!own->sizes().equals(tensor.sizes()) || own->scalar_type() != tensor.scalar_type()) {
    throw ShapeMismatch(what + ": that tensor is " + shapeAndDtypeText(tensor) + ", the layer's " + name + " is " +
                        shapeAndDtypeText(*own));
  }
  if (!assignAnyMember(module, name, tensor)) {
    throw InvalidArgument(what + ": weight tying works for linear, embedding, convolution and layerNorm layers");
  }
  parameters[name] = tensor;
}

}  // namespace firebrand
