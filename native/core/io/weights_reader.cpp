#include "core/io/weights_reader.h"

#include "core/errors.h"

namespace firebrand {

TensorDictReader::TensorDictReader(TensorDict tensors) : tensors_(std::move(tensors)) {
  for (const auto& [name, tensor] : tensors_) shapes_.emplace(name, tensor.sizes().vec());
}

at::Tensor TensorDictReader::read(const std::string& name) {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) throw InvalidArgument("internal: no weight '" + name + "' to read");
  return it->second;
}

RenamedReader::RenamedReader(std::unique_ptr<WeightsReader> source,
                             const std::map<std::string, std::optional<std::string>>& renames,
                             const std::string& origin)
    : source_(std::move(source)) {
  for (const auto& [name, shape] : source_->shapes()) {
    const auto it = renames.find(name);
    if (it != renames.end() && !it->second) continue;
    const std::string target = it == renames.end() ? name : *it->second;
    const auto [previous, isNew] = sourceNames_.emplace(target, name);
    if (!isNew) {
      throw InvalidArgument(origin + ": the map gives weights '" + previous->second + "' and '" + name +
                            "' the same name '" + target + "'");
    }
    shapes_.emplace(target, shape);
  }
}

const std::string& RenamedReader::sourceName(const std::string& name) const {
  const auto it = sourceNames_.find(name);
  if (it == sourceNames_.end()) throw InvalidArgument("internal: no weight '" + name + "' to read");
  return it->second;
}

at::Tensor RenamedReader::read(const std::string& name) { return source_->read(sourceName(name)); }

void RenamedReader::copyInto(const std::string& name, at::Tensor& target) {
  source_->copyInto(sourceName(name), target);
}

}  // namespace firebrand
