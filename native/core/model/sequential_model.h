// A model built from a list of LayerSpecs, run layer by layer so that a
// failing layer is named with the input it got and the input it expects.
// Parameters are registered as "0.weight", "0.bias", ... like PyTorch's
// nn.Sequential, so state dicts line up with Python.
#pragma once
#include <torch/nn/module.h>

#include <memory>
#include <string>
#include <vector>

#include "core/nn/layer_factory.h"
#include "core/nn/layer_spec.h"
#include "core/model/model.h"

namespace firebrand {

class SequentialModel : public Model {
 public:
  explicit SequentialModel(const ModelSpec& spec);

  at::Tensor forward(const at::Tensor& input) override;
  torch::OrderedDict<std::string, at::Tensor> namedParameters() const override;
  torch::OrderedDict<std::string, at::Tensor> namedBuffers() const override { return module_->named_buffers(); }
  bool isTraining() const override { return module_->is_training(); }
  void moveTo(const c10::Device& device) override { module_->to(device); }
  void saveTorchScript(const std::string& path) const override;
  std::vector<std::pair<std::string, BuiltLayer*>> builtLayers() override;

  const ModelSpec& spec() const { return spec_; }
  const torch::nn::Module& module() const { return *module_; }
  const torch::nn::AnyModule& layerModule(size_t index) const { return layers_.at(index).built.module; }

 protected:
  void setModelTraining(bool training) override;
  std::vector<std::string> modulePaths() const override;
  void setModuleTraining(const std::string& path, bool training) override;

 private:
  struct Layer {
    std::string owner;  // "layers[2] (conv2d)"
    BuiltLayer built;
  };
  ModelSpec spec_;
  std::shared_ptr<torch::nn::Module> module_;  // holds the layers' parameters and buffers
  std::vector<Layer> layers_;
};

}  // namespace firebrand
