#include "core/io/torch_save_reader.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <caffe2/serialize/inline_container.h>

#include <map>
#include <memory>

#include "core/errors.h"
#include "core/io/restricted_unpickler.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

class TensorsOfArchive {
 public:
  TensorsOfArchive(caffe2::serialize::PyTorchStreamReader& archive, std::string path)
      : archive_(archive), path_(std::move(path)) {}

  // The tensors of `value` (a dict, at any depth) under `prefix`.
  void collect(const PickleValue& value, const std::string& prefix, TensorDict& tensors) {
    if (const auto* tensor = std::get_if<PickleTensor>(&value.value)) {
      tensors[prefix] = build(*tensor, prefix);
    } else if (const auto* dict = std::get_if<std::shared_ptr<PickleDict>>(&value.value)) {
      for (const auto& [key, item] : **dict) {
        const auto* name = std::get_if<std::string>(&key.value);
        if (name) collect(item, prefix.empty() ? *name : prefix + "." + *name, tensors);
      }
    }
  }

 private:
  const at::Tensor& storage(const PickleStorage& storage) {
    auto found = storages_.find(storage.key);
    if (found != storages_.end()) return found->second;
    auto [data, size] = archive_.getRecord("data/" + storage.key);
    const size_t expected = static_cast<size_t>(storage.numel) * c10::elementSize(storage.dtype);
    if (storage.numel < 0 || size != expected) {
      throw FileError(path_ + ": storage data/" + storage.key + " holds " + std::to_string(size) + " bytes, expected " +
                      std::to_string(expected) + " (" + std::to_string(storage.numel) + " " +
                      c10::toString(storage.dtype) + " values)");
    }
    auto owner = std::make_shared<at::DataPtr>(std::move(data));
    at::Tensor tensor = at::from_blob(
        owner->get(), {storage.numel}, [owner](void*) {}, at::TensorOptions().dtype(storage.dtype));
    return storages_.emplace(storage.key, tensor).first->second;
  }

  at::Tensor build(const PickleTensor& tensor, const std::string& name) {
    const at::Tensor& whole = storage(tensor.storage);
    bool empty = false;
    int64_t last = tensor.offset;
    for (size_t i = 0; i < tensor.sizes.size(); ++i) {
      if (tensor.sizes[i] < 0 || (i < tensor.strides.size() && tensor.strides[i] < 0)) last = -1;
      if (tensor.sizes[i] == 0) empty = true;
      if (i < tensor.strides.size() && tensor.sizes[i] > 0) last += (tensor.sizes[i] - 1) * tensor.strides[i];
    }
    if (tensor.sizes.size() != tensor.strides.size() || tensor.offset < 0 || last < 0 ||
        (!empty && last >= whole.numel())) {
      throw FileError(path_ + ": tensor '" + name + "' of shape " + shapeText(tensor.sizes) +
                      " does not fit inside its storage data/" + tensor.storage.key + " of " +
                      std::to_string(whole.numel()) + " values");
    }
    at::Tensor view = whole.as_strided(tensor.sizes, tensor.strides, tensor.offset);
    // A view of a whole storage keeps it as read; any other view is copied out of it.
    return view.is_contiguous() && view.numel() == whole.numel() ? view : view.clone();
  }

  caffe2::serialize::PyTorchStreamReader& archive_;
  std::string path_;
  std::map<std::string, at::Tensor> storages_;
};

}  // namespace

TensorDict readTorchSave(const std::string& path) {
  try {
    caffe2::serialize::PyTorchStreamReader archive(path);
    if (!archive.hasRecord("data.pkl"))
      throw FileError(path + ": a zip archive without data.pkl (not a torch.save file)");
    if (archive.hasRecord("byteorder")) {
      auto [order, size] = archive.getRecord("byteorder");
      if (std::string(static_cast<const char*>(order.get()), size) != "little") {
        throw FileError(path + ": saved on a big-endian machine; firebrand reads little-endian torch.save files");
      }
    }
    auto [pickle, size] = archive.getRecord("data.pkl");
    const PickleValue root = unpickleRestricted(std::string(static_cast<const char*>(pickle.get()), size), path);
    TensorDict tensors;
    TensorsOfArchive(archive, path).collect(root, "", tensors);
    if (tensors.empty()) throw FileError(path + ": holds no tensors in a dict (expected a state dict)");
    return tensors;
  } catch (const c10::Error& error) {
    throw FileError(path + ": not a torch.save zip file (" + error.what_without_backtrace() + ")");
  }
}

}  // namespace firebrand
