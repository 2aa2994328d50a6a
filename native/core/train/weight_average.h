// An exponential moving average of the model's weights (timm's ModelEmaV3,
// Lightning's EMAWeightAveraging): after each optimizer step every parameter and
// floating buffer's average moves toward it, average = lerp(average, value,
// 1 - decay); other buffers are copied. The first update copies (decay 0); with
// warm-up the decay grows as 1 - (1 + t)^(-2/3) up to `decay`, as timm's.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/tensor_dict.h"

namespace firebrand {

struct WeightAverageOptions {
  double decay = 0.999;
  bool warmup = false;
  bool evaluate = true;  // evaluation runs on the averaged weights
};

class WeightAverage {
 public:
  // Starts from the model's current weights.
  WeightAverage(const Model& model, const WeightAverageOptions& options);

  const WeightAverageOptions& options() const { return options_; }
  // The decay of the `update`-th update (1 for the first).
  double decayAt(int64_t update) const;
  void update(int64_t update);
  // Exchanges the model's weights with the averages (twice: back as they were).
  void swapWithModel();
  void copyToModel();
  // The averages by state-dict name; restore() checks names and shapes against them.
  TensorDict state() const;
  void restore(const TensorDict& state, const std::string& origin);

 private:
  WeightAverageOptions options_;
  std::vector<std::string> names_;
  std::vector<at::Tensor> values_;  // the model's own tensors
  std::vector<at::Tensor> averages_;
};

}  // namespace firebrand
