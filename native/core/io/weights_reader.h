// Weights by name whose values are read when asked for: what a file holds
// (names and shapes) is known up front, and loading it into a model reads one
// tensor at a time, so a checkpoint is never held whole beside the model.
#pragma once
#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor_dict.h"

namespace firebrand {

using WeightShapes = std::map<std::string, std::vector<int64_t>, std::less<>>;

class WeightsReader {
 public:
  virtual ~WeightsReader() = default;
  // Every tensor's name and shape, before any is read.
  virtual const WeightShapes& shapes() const = 0;
  // The values of `name` (one of shapes()), read now.
  virtual at::Tensor read(const std::string& name) = 0;
  // The values of `name` into `target` (of its shape): a reader that can, reads them straight into
  // the target's memory, with no tensor between (half the memory traffic of a checkpoint's load).
  virtual void copyInto(const std::string& name, at::Tensor& target) { target.copy_(read(name)); }
};

// Tensors already in memory (a saved state, a TorchScript module's parameters).
class TensorDictReader : public WeightsReader {
 public:
  explicit TensorDictReader(TensorDict tensors);
  const WeightShapes& shapes() const override { return shapes_; }
  at::Tensor read(const std::string& name) override;

 private:
  TensorDict tensors_;
  WeightShapes shapes_;
};

// Another reader's weights with names changed as `renames` says (an absent entry keeps its name;
// nullopt leaves the weight out). Two weights given one name is an error naming both.
class RenamedReader : public WeightsReader {
 public:
  RenamedReader(std::unique_ptr<WeightsReader> source, const std::map<std::string, std::optional<std::string>>& renames,
                const std::string& origin);
  const WeightShapes& shapes() const override { return shapes_; }
  at::Tensor read(const std::string& name) override;
  void copyInto(const std::string& name, at::Tensor& target) override;

 private:
  const std::string& sourceName(const std::string& name) const;

  std::unique_ptr<WeightsReader> source_;
  WeightShapes shapes_;
  std::map<std::string, std::string, std::less<>> sourceNames_;  // by new name
};

}  // namespace firebrand
