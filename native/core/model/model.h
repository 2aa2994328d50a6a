// What the training engine trains: a traced TypeScript module (GraphModel; an
// nn.sequential is one) or a TorchScript module (ScriptModel). A TorchScript module may define its own steps,
// training_step(batch) / validation_step(batch) -> Dict[str, Tensor], with
// the batch's fields as a Dict[str, Tensor] ({"input": ..., "target": ...}).
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <torch/ordered_dict.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/data/batch.h"
#include "core/graph/decode_cache.h"
#include "core/graph/graph_onnx.h"
#include "core/nn/layer_factory.h"
#include "core/output_layout.h"
#include "core/runtime/cpu_memory_cache.h"
#include "core/tensor_dict.h"

namespace firebrand {

class Model {
 public:
  virtual ~Model() = default;

  // The output the loss and metrics read: with several outputs, the selected one (selectOutput).
  virtual at::Tensor forward(const at::Tensor& inputs) = 0;
  // The output for a batch: forward of its "input" field, or of the fields a model takes by name.
  virtual at::Tensor forward(const Batch& batch) { return forward(batch.inputs()); }
  // Every output, in outputLayout() order (what predict returns).
  virtual std::vector<at::Tensor> forwardAll(const at::Tensor& inputs) { return {forward(inputs)}; }
  // Every output for a batch's fields (predict with named inputs).
  virtual std::vector<at::Tensor> forwardAll(const Batch& batch) { return forwardAll(batch.inputs()); }
  // A language model's output for token ids [batch, T] and their attention mask [batch, positions] (1 for
  // a token, 0 for padding; its last T columns are the ids'). A model that takes attention_mask by name
  // gets it; one that takes the ids alone cannot take padding. With a `cache` (generate's key/value
  // cache), incremental decoding: the ids are the positions after the cache.past ones the cache holds,
  // which it then holds too; NotIncremental, naming why, from a model that cannot (only traced modules can).
  virtual at::Tensor forwardTokens(const at::Tensor& ids, const at::Tensor& mask, DecodeCache* cache);
  virtual const OutputLayout& outputLayout() const;
  // Chooses, by name, which of several outputs forward() gives (config.lossOutput); the first by default.
  void selectOutput(const std::string& name);
  // A description of the batch's model inputs for errors: "samples of shape [4]".
  virtual std::string describeInputs(const Batch& batch) const;
  virtual torch::OrderedDict<std::string, at::Tensor> namedParameters() const = 0;
  // Running statistics and other state that is not trained (BatchNorm's running_mean, ...).
  virtual torch::OrderedDict<std::string, at::Tensor> namedBuffers() const = 0;
  // Names under which the model holds a tensor a second time (weight tying), each with the name
  // namedParameters()/namedBuffers() give it: {alias, name}.
  virtual std::vector<std::pair<std::string, std::string>> tiedNames() const { return {}; }
  // Buffers kept out of the state dict (register_buffer(..., persistent=False)), by name.
  virtual std::vector<std::string> nonPersistentBuffers() const { return {}; }
  // Every state name, tied ones included, parameters before buffers, each in the order its module
  // registered it (a tied field keeps its place among the module's own: weight before bias).
  virtual std::vector<std::string> registrationOrder() const;
  // The state dict: parameters, buffers, and tied tensors under each name (as PyTorch's state_dict).
  TensorDict stateTensors() const;
  // The same in PyTorch's state_dict() order: module by module (pre-order), each one's parameters
  // then its buffers.
  std::vector<std::pair<std::string, at::Tensor>> orderedStateTensors() const;
  // Train or eval mode; while training, a module whose parameters are all frozen stays in eval mode.
  void setTraining(bool training);
  virtual bool isTraining() const = 0;
  // Fine-tuning: freezes or unfreezes parameters, by namedParameters() name. A frozen parameter has
  // requires_grad off, so autograd computes no gradient for it; a module whose parameters are all
  // frozen runs in eval mode while the model trains (BatchNorm keeps its statistics, dropout is off).
  void setFrozen(const std::vector<std::string>& names, bool frozen);
  // Whether modules left with nothing to train run in eval mode (true; LoRA turns it off, as PEFT
  // leaves every module's mode alone).
  void setEvalFrozenModules(bool on) { evalFrozenModules_ = on; }
  // The frozen parameters' names, in namedParameters() order.
  std::vector<std::string> frozenParameters() const;
  // Activation checkpointing: the modules `patterns` take (name_patterns.h; the outermost of them)
  // recompute their activations in backward instead of keeping them; returns their paths. Only
  // models written as TypeScript modules can (the default is an error saying so).
  virtual std::vector<std::string> checkpointActivations(const std::vector<std::string>& patterns);
  // The built-in layers by module path, in module order (LoRA adapts them); none for TorchScript.
  virtual std::vector<std::pair<std::string, BuiltLayer*>> builtLayers() { return {}; }
  virtual void moveTo(const c10::Device& device) = 0;
  // Writes a TorchScript module that torch.jit.load (Python or C++) can run.
  virtual void saveTorchScript(const std::string& path) const = 0;
  // The model as an ONNX graph, traced in eval mode from `example` (the tensors forward takes, by
  // input field: "input" for a model of one). Throws NotExportable for a model firebrand has no graph of.
  virtual OnnxGraph onnxGraph(const TensorDict& example, const OnnxExportOptions& options);

  virtual bool hasTrainingStep() const { return false; }
  virtual bool hasValidationStep() const { return false; }
  virtual TensorDict trainingStep(const TensorDict& batch);
  virtual TensorDict validationStep(const TensorDict& batch);

  std::vector<at::Tensor> parameters() const;
  int64_t parameterCount() const;
  // Calls `visit` on each parameter (a tied one possibly twice), in namedParameters() order, until it
  // returns false. Without names: per-token and per-call checks use it (namedParameters() builds each name).
  virtual void visitParameters(const std::function<bool(const at::Tensor&)>& visit) const;
  // The first parameter's dtype (float32 for a model without parameters): the dtype inputs are given in.
  at::ScalarType parameterDtype() const;
  // Changes when a parameter is written in place (its version) or replaced by another tensor: generation's
  // key/value cache holds keys computed from them.
  uint64_t weightsFingerprint() const;
  // Every submodule's path ("layer1", "layer1.0", ...).
  virtual std::vector<std::string> modulePaths() const = 0;

  // From its first prediction on, blocks freed by its forwards stay cached for the next call for as long
  // as the model lives, as onnxruntime's arena does: each call would otherwise fault its activations in.
  void keepPredictionMemory();
  // Before decoding, which streams every weight once per token: the memory of its parameters and
  // buffers backed by huge pages (runtime/huge_pages.h), once for each set of storages.
  void backWeightsWithHugePages();

  // Whether decoding from a key/value cache was checked against a full forward for this model, on a batch
  // with padding or without: a check passed holds for every later generation (the graph is the same).
  bool decodeCacheChecked(bool padded) const { return padded ? paddedCacheChecked_ : cacheChecked_; }
  void markDecodeCacheChecked(bool padded) { (padded ? paddedCacheChecked_ : cacheChecked_) = true; }

 protected:
  // forwardTokens' refusal of padding (a 0 in `mask`) for a model that takes the token ids alone.
  static void refusePadding(const at::Tensor& mask);
  // The whole module tree's mode.
  virtual void setModelTraining(bool training) = 0;
  // These submodules' modes (with their own).
  virtual void setModulesTraining(const std::vector<std::string>& paths, bool training) = 0;

  size_t selectedOutput_ = 0;  // into outputLayout().names

 private:
  std::vector<std::string> frozenModules_;  // paths kept in eval mode while the model trains
  bool evalFrozenModules_ = true;
  std::unique_ptr<CpuMemoryCache::Retainer> predictionMemory_;
  size_t hugePageWeights_ = 0;  // a fingerprint of the storages backWeightsWithHugePages last backed
  bool cacheChecked_ = false;
  bool paddedCacheChecked_ = false;
};

}  // namespace firebrand
