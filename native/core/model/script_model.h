// A TorchScript module trained in place: loaded from a file saved by
// torch.jit.save, or defined from TorchScript source plus named parameters.
// Its methods run without the graph executor's optimizing passes (as under
// torch.jit.optimized_execution(False)): they re-specialize a method for the
// shapes seen, and libtorch 2.14's then mis-compiled `x.matmul(w) + b` once a
// one-sample batch (the set-up check) came between training batches.
// TorchScript is in maintenance upstream; the interpreter runs the ops as written.
#pragma once
#include <torch/script.h>

#include <string>
#include <vector>

#include "core/model/model.h"

namespace firebrand {

struct NamedTensor {
  std::string name;
  at::Tensor value;
};

class ScriptModel : public Model {
 public:
  static std::shared_ptr<ScriptModel> load(const std::string& path);
  // `source` holds methods (def forward(self, x): ...) using self.<name> for each parameter.
  static std::shared_ptr<ScriptModel> define(const std::string& source, const std::vector<NamedTensor>& parameters);

  at::Tensor forward(const at::Tensor& inputs) override;
  // A forward that returns a tuple of tensors gives them all ("0", "1", ... by position).
  std::vector<at::Tensor> forwardAll(const at::Tensor& inputs) override;
  using Model::forwardAll;
  const OutputLayout& outputLayout() const override { return outputLayout_; }
  torch::OrderedDict<std::string, at::Tensor> namedParameters() const override;
  torch::OrderedDict<std::string, at::Tensor> namedBuffers() const override;
  bool isTraining() const override { return module_.is_training(); }
  void moveTo(const c10::Device& device) override { module_.to(device); }
  void saveTorchScript(const std::string& path) const override;
  // Refused, saying why: libtorch runs TorchScript in its interpreter, with no op-by-op graph here.
  OnnxGraph onnxGraph(const TensorDict& example, const OnnxExportOptions& options) override;

  bool hasTrainingStep() const override { return hasTrainingStep_; }
  bool hasValidationStep() const override { return hasValidationStep_; }
  TensorDict trainingStep(const TensorDict& batch) override;
  TensorDict validationStep(const TensorDict& batch) override;

 protected:
  void setModelTraining(bool training) override;
  std::vector<std::string> modulePaths() const override;
  void setModulesTraining(const std::vector<std::string>& paths, bool training) override;

 private:
  explicit ScriptModel(torch::jit::Module module, std::string origin);
  TensorDict callStep(const char* method, const TensorDict& batch);

  torch::jit::Module module_;
  std::string origin_;  // the file or "TorchScript source", for errors
  OutputLayout outputLayout_;
  bool hasTrainingStep_;
  bool hasValidationStep_;
};

}  // namespace firebrand
