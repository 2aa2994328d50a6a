// Loading weights by state-dict name into a model (checkpoints, initWeightsFrom).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/io/weights_reader.h"
#include "core/model/model.h"

namespace firebrand {

struct WeightsReport {
  std::vector<std::string> missing;     // the model's, absent from the weights
  std::vector<std::string> unexpected;  // the weights', absent from the model
};

// Copies every weight whose name the model has into its parameter or buffer
// (cast to its dtype, on its device). A shape that differs is always an error;
// with `strict`, so is a missing or unexpected name. `origin` names the source.
// The file's tensors are read one at a time, so a checkpoint is never held whole beside the model.
WeightsReport loadWeights(Model& model, WeightsReader& weights, bool strict, const std::string& origin);
WeightsReport loadWeights(Model& model, const TensorDict& weights, bool strict, const std::string& origin);

// The weights in a file, by its content: a .safetensors file, a torch.save zip (.pt/.pth, its pickle
// interpreted, never run), else a TorchScript module's parameters and buffers (code: load trusted ones only).
std::unique_ptr<WeightsReader> openWeightsFile(const std::string& path);

}  // namespace firebrand
