// Small pieces the training and evaluation loops share: reading a loss back,
// sums of a custom step's logged values, a stream closed however a loop ends.
#pragma once
#include <ATen/ATen.h>

#include <chrono>
#include <string>

#include "core/data/batch_stream.h"
#include "core/errors.h"
#include "core/metrics/metric_set.h"
#include "core/shape_text.h"
#include "core/tensor_dict.h"

namespace firebrand {

inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Tells a stream its consumer is done, however the loop ends.
class StreamCloser {
 public:
  explicit StreamCloser(BatchStream& stream) : stream_(stream) {}
  ~StreamCloser() { stream_.close(); }

 private:
  BatchStream& stream_;
};

// A loss as a number. A float scalar on the CPU is read from its memory:
// item() takes four dispatches, which show on a small model's step.
inline double lossValue(const at::Tensor& loss) {
  if (loss.device().is_cpu() && loss.numel() == 1 && !loss.is_neg()) {
    if (loss.scalar_type() == at::kFloat) return *loss.data_ptr<float>();
    if (loss.scalar_type() == at::kDouble) return *loss.data_ptr<double>();
  }
  return loss.item<double>();
}

// Running sums of a custom step's logged values, weighted by batch size.
inline void addLogged(TensorDict& sums, const TensorDict& logged, int64_t batchSize) {
  for (const auto& [name, value] : logged) {
    if (value.numel() != 1) {
      throw InvalidArgument("the step's entry '" + name + "' must be a scalar tensor to be logged, got shape " +
                            shapeText(value));
    }
    const at::Tensor weighted = value.reshape({}).to(at::kDouble) * static_cast<double>(batchSize);
    auto it = sums.find(name);
    if (it == sums.end()) {
      sums.emplace(name, weighted);
    } else {
      it->second.add_(weighted);
    }
  }
}

inline void putMeans(MetricValues& metrics, const TensorDict& sums, int64_t samples) {
  for (const auto& [name, sum] : sums) metrics.scalars[name] = sum.item<double>() / static_cast<double>(samples);
}

}  // namespace firebrand
