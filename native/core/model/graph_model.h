// A model written as TypeScript modules (src/nn/module): the module tree
// with PyTorch's names, and the traced forward run in C++ at every step.
#pragma once
#include <memory>
#include <string>

#include "core/graph/graph_program.h"
#include "core/graph/module_tree.h"
#include "core/model/model.h"
#include "core/model/submodule_modes.h"

namespace firebrand {

class GraphModel : public Model {
 public:
  // `description`: the JSON of src/nn/module/graph-model.ts's GraphModelSpec.
  explicit GraphModel(const std::string& description);

  at::Tensor forward(const at::Tensor& input) override;
  // The fields forward takes (Module.inputFields()), by name.
  at::Tensor forward(const Batch& batch) override;
  std::vector<at::Tensor> forwardAll(const at::Tensor& input) override;
  std::vector<at::Tensor> forwardAll(const Batch& batch) override;
  at::Tensor forwardTokens(const at::Tensor& ids, const at::Tensor& mask, DecodeCache* cache) override;
  const OutputLayout& outputLayout() const override { return program_->graph().returns; }
  std::string describeInputs(const Batch& batch) const override;
  // Each tensor once, under its first name (PyTorch's named_parameters): tied ones are tiedNames().
  torch::OrderedDict<std::string, at::Tensor> namedParameters() const override;
  torch::OrderedDict<std::string, at::Tensor> namedBuffers() const override;
  void visitParameters(const std::function<bool(const at::Tensor&)>& visit) const override;
  std::vector<std::pair<std::string, std::string>> tiedNames() const override { return tiedNames_; }
  std::vector<std::string> registrationOrder() const override;
  std::vector<std::string> nonPersistentBuffers() const override { return nonPersistentBuffers_; }
  bool isTraining() const override { return tree_.root->is_training(); }
  void moveTo(const c10::Device& device) override;
  std::vector<std::pair<std::string, BuiltLayer*>> builtLayers() override;
  std::vector<std::string> checkpointActivations(const std::vector<std::string>& patterns) override;
  void saveTorchScript(const std::string& path) const override;
  OnnxGraph onnxGraph(const TensorDict& example, const OnnxExportOptions& options) override;

  // Each graph node's output shape for `input` (nullopt for values that are not one tensor), in
  // eval mode without autograd: what summary() shows.
  std::vector<std::optional<std::vector<int64_t>>> nodeShapes(const at::Tensor& input);

  const GraphSpec& graph() const { return program_->graph(); }
  const ModuleTree& tree() const { return tree_; }

 protected:
  void setModelTraining(bool training) override;
  std::vector<std::string> modulePaths() const override;
  void setModulesTraining(const std::vector<std::string>& paths, bool training) override;

 private:
  GraphModel(GraphModelSpec spec);
  // The inputs of a model that takes one tensor (predict), or an error naming the fields it takes.
  std::vector<at::Tensor> singleInput(const at::Tensor& input) const;

  ModuleTree tree_;
  std::unique_ptr<GraphProgram> program_;
  std::vector<std::pair<std::string, std::string>> tiedNames_;
  std::vector<std::string> nonPersistentBuffers_;
  c10::Device device_ = c10::kCPU;
  SubmoduleModes submoduleModes_;
};

}  // namespace firebrand
