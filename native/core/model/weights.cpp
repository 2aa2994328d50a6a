#include "core/model/weights.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/script.h>
#include <torch/utils.h>

#include <fstream>
#include <map>

#include "core/errors.h"
#include "core/io/input_file.h"
#include "core/io/safetensors_reader.h"
#include "core/io/torch_save_reader.h"
#include "core/model/lora_adapters.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

std::string commaSeparated(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace

WeightsReport loadWeights(Model& model, WeightsReader& weights, bool strict, const std::string& origin) {
  TensorDict targets = model.stateTensors();
  const WeightShapes& shapes = weights.shapes();
  // A tied name may be left out when the tensor comes under its first name (as safetensors' save_model does).
  std::map<std::string, std::string> tiedTo;
  for (const auto& [alias, name] : model.tiedNames()) tiedTo.emplace(alias, name);
  const std::set<std::string> adapters = adapterStateNames(model);
  WeightsReport report;
  std::vector<std::string> misshapen;
  for (const auto& [name, target] : targets) {
    const auto it = shapes.find(name);
    const auto tied = tiedTo.find(name);
    if (it == shapes.end()) {
      const bool elsewhere = (tied != tiedTo.end() && shapes.count(tied->second)) || adapters.count(name);
      if (!elsewhere) report.missing.push_back(name);
    } else if (!target.sizes().equals(it->second)) {
      misshapen.push_back("'" + name + "' has shape " + shapeText(it->second) + " but the model's is " +
                          shapeText(target));
    }
  }
  if (!misshapen.empty()) {
    throw ShapeMismatch(origin + ": " + std::to_string(misshapen.size()) + " weight" +
                        (misshapen.size() == 1 ? "" : "s") + " do not fit the model: " + commaSeparated(misshapen));
  }
  // One tensor in the model under two names: the file must agree with itself (PyTorch's
  // load_state_dict would keep whichever name it copies last, silently).
  for (const auto& [alias, name] : tiedTo) {
    if (!shapes.count(name) || !shapes.count(alias)) continue;
    const at::Tensor first = weights.read(name).to(at::kDouble);
    const at::Tensor second = weights.read(alias).to(at::kDouble);
    if (!at::equal(first, second)) {
      const double difference = (first - second).abs().max().item<double>();
      throw InvalidArgument(origin + ": weights '" + name + "' and '" + alias +
                            "' are one tied tensor in the model, but the file " +
                            "holds different values for them (they differ by up to " + std::to_string(difference) +
                            "); keep one of them (initWeightsFrom's map can leave the other out with null)");
    }
  }
  for (const auto& [name, shape] : shapes) {
    if (!targets.count(name)) report.unexpected.push_back(name);
  }
  if (strict && (!report.missing.empty() || !report.unexpected.empty())) {
    throw InvalidArgument(origin + ": the weights do not match the model" +
                          (report.missing.empty() ? "" : "; missing: " + commaSeparated(report.missing)) +
                          (report.unexpected.empty() ? "" : "; unexpected: " + commaSeparated(report.unexpected)));
  }
  // One file tensor at a time: read, copied into the model and let go.
  torch::NoGradGuard noGrad;
  for (auto& [name, target] : targets) {
    if (shapes.count(name)) weights.copyInto(name, target);
  }
  return report;
}

WeightsReport loadWeights(Model& model, const TensorDict& weights, bool strict, const std::string& origin) {
  TensorDictReader reader(weights);
  return loadWeights(model, reader, strict, origin);
}

namespace {

// Whether a zip archive is a TorchScript module (it has constants.pkl) rather than a torch.save file.
bool isTorchScript(const std::string& path) {
  try {
    return caffe2::serialize::PyTorchStreamReader(path).hasRecord("constants.pkl");
  } catch (const c10::Error& error) {
    throw FileError(path + ": a zip file that is neither a TorchScript module nor a torch.save file (" +
                    error.what_without_backtrace() + ")");
  }
}

std::unique_ptr<WeightsReader> torchScriptWeights(const std::string& path) {
  torch::jit::Module module;
  try {
    module = torch::jit::load(path);
  } catch (const c10::Error& error) {
    throw FileError(path + ": not a TorchScript module that loads (" + error.what_without_backtrace() + ")");
  }
  TensorDict weights;
  for (const auto& item : module.named_parameters(/*recurse=*/true)) weights[item.name] = item.value.detach();
  for (const auto& item : module.named_buffers(/*recurse=*/true)) weights[item.name] = item.value.detach();
  return std::make_unique<TensorDictReader>(std::move(weights));
}

}  // namespace

std::unique_ptr<WeightsReader> openWeightsFile(const std::string& path) {
  checkInputFile(path, "weights file (.safetensors, torch.save .pt/.pth or TorchScript)");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw FileError(path + ": cannot open weights file");
  char magic[2] = {0, 0};
  file.read(magic, 2);
  // torch.save and TorchScript files are ZIP archives ("PK"); safetensors files start with a header length.
  if (!(magic[0] == 'P' && magic[1] == 'K')) return openSafetensors(path);
  return isTorchScript(path) ? torchScriptWeights(path) : openTorchSave(path);
}

}  // namespace firebrand
