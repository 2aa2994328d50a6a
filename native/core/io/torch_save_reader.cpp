#include "core/io/torch_save_reader.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <caffe2/serialize/inline_container.h>

#include <map>
#include <memory>
#include <tuple>

#include "core/errors.h"
#include "core/io/restricted_unpickler.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

// Every tensor of `value` (a dict, at any depth) under its dotted name.
void collect(const PickleValue& value, const std::string& prefix,
             std::map<std::string, PickleTensor, std::less<>>& tensors) {
  if (const auto* tensor = std::get_if<PickleTensor>(&value.value)) {
    tensors[prefix] = *tensor;
  } else if (const auto* dict = std::get_if<std::shared_ptr<PickleDict>>(&value.value)) {
    for (const auto& [key, item] : **dict) {
      const auto* name = std::get_if<std::string>(&key.value);
      if (name) collect(item, prefix.empty() ? *name : prefix + "." + *name, tensors);
    }
  }
}

class TorchSaveWeights : public WeightsReader {
 public:
  explicit TorchSaveWeights(const std::string& path)
      : path_(path), archive_(std::make_unique<caffe2::serialize::PyTorchStreamReader>(path)) {
    if (!archive_->hasRecord("data.pkl"))
      throw FileError(path + ": a zip archive without data.pkl (not a torch.save file)");
    if (archive_->hasRecord("byteorder")) {
      auto [order, size] = archive_->getRecord("byteorder");
      if (std::string(static_cast<const char*>(order.get()), size) != "little") {
        throw FileError(path + ": saved on a big-endian machine; firebrand reads little-endian torch.save files");
      }
    }
    auto [pickle, size] = archive_->getRecord("data.pkl");
    collect(unpickleRestricted(std::string(static_cast<const char*>(pickle.get()), size), path), "", tensors_);
    if (tensors_.empty()) throw FileError(path + ": holds no tensors in a dict (expected a state dict)");
    for (const auto& [name, tensor] : tensors_) {
      checkView(name, tensor);
      shapes_.emplace(name, tensor.sizes);
    }
  }

  const WeightShapes& shapes() const override { return shapes_; }

  // The view of its storage, read now; a view of the whole storage keeps it as read, any other is copied out.
  at::Tensor read(const std::string& name) override {
    const auto found = tensors_.find(name);
    if (found == tensors_.end()) throw InvalidArgument("internal: no weight '" + name + "' in " + path_);
    const PickleTensor& tensor = found->second;
    const at::Tensor whole = storage(tensor.storage);
    at::Tensor view = whole.as_strided(tensor.sizes, tensor.strides, tensor.offset);
    return view.is_contiguous() && view.numel() == whole.numel() ? view : view.clone();
  }

 private:
  // A view must lie inside its storage (as many values as the storage record holds, checked when read).
  void checkView(const std::string& name, const PickleTensor& tensor) const {
    bool empty = false;
    int64_t last = tensor.offset;
    for (size_t i = 0; i < tensor.sizes.size(); ++i) {
      if (tensor.sizes[i] < 0 || (i < tensor.strides.size() && tensor.strides[i] < 0)) last = -1;
      if (tensor.sizes[i] == 0) empty = true;
      if (i < tensor.strides.size() && tensor.sizes[i] > 0) last += (tensor.sizes[i] - 1) * tensor.strides[i];
    }
    if (tensor.sizes.size() != tensor.strides.size() || tensor.offset < 0 || last < 0 ||
        (!empty && last >= tensor.storage.numel)) {
      throw FileError(path_ + ": tensor '" + name + "' of shape " + shapeText(tensor.sizes) +
                      " does not fit inside its storage data/" + tensor.storage.key + " of " +
                      std::to_string(tensor.storage.numel) + " values");
    }
  }

  at::Tensor storage(const PickleStorage& storage) {
    at::DataPtr data;
    size_t size = 0;
    try {
      std::tie(data, size) = archive_->getRecord("data/" + storage.key);
    } catch (const c10::Error& error) {
      throw FileError(path_ + ": storage data/" + storage.key + " cannot be read (" + error.what_without_backtrace() +
                      ")");
    }
    const size_t expected = static_cast<size_t>(storage.numel) * c10::elementSize(storage.dtype);
    if (storage.numel < 0 || size != expected) {
      throw FileError(path_ + ": storage data/" + storage.key + " holds " + std::to_string(size) + " bytes, expected " +
                      std::to_string(expected) + " (" + std::to_string(storage.numel) + " " +
                      c10::toString(storage.dtype) + " values)");
    }
    auto owner = std::make_shared<at::DataPtr>(std::move(data));
    return at::from_blob(
        owner->get(), {storage.numel}, [owner](void*) {}, at::TensorOptions().dtype(storage.dtype));
  }

  std::string path_;
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> archive_;
  std::map<std::string, PickleTensor, std::less<>> tensors_;
  WeightShapes shapes_;
};

}  // namespace

std::unique_ptr<WeightsReader> openTorchSave(const std::string& path) {
  try {
    return std::make_unique<TorchSaveWeights>(path);
  } catch (const c10::Error& error) {
    throw FileError(path + ": not a torch.save zip file (" + error.what_without_backtrace() + ")");
  }
}

}  // namespace firebrand
