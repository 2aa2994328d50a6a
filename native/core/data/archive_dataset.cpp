#include "core/data/archive_dataset.h"

#include "core/data/npz_reader.h"
#include "core/errors.h"
#include "core/io/safetensors_reader.h"

namespace firebrand {
namespace {

TensorDataset select(TensorDict arrays, const FieldSelection& fields, const std::string& path) {
  TensorDict chosen = fields.empty() ? std::move(arrays) : TensorDict{};
  for (const auto& [field, name] : fields) {
    const auto it = arrays.find(name);
    if (it == arrays.end()) {
      throw FileError(path + ": no array '" + name + "' for field '" + field + "' (the file has " + fieldNames(arrays) +
                      ")");
    }
    chosen.emplace(field, it->second);
  }
  try {
    return TensorDataset(std::move(chosen));
  } catch (const Error& error) {
    throw FileError(path + ": " + error.what());
  }
}

}  // namespace

TensorDataset loadNpzDataset(const std::string& path, const FieldSelection& fields) {
  return select(readNpz(path), fields, path);
}

TensorDataset loadSafetensorsDataset(const std::string& path, const FieldSelection& fields) {
  return select(readSafetensors(path).tensors, fields, path);
}

}  // namespace firebrand
