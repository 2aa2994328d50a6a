#include "binding/results.h"

#include "binding/convert.h"
#include "core/shape_text.h"

namespace firebrand::binding {
namespace {

Napi::Value number(Napi::Env env, double value) { return Napi::Number::New(env, value); }

Napi::Value optionalNumber(Napi::Env env, const std::optional<double>& value) {
  return value ? number(env, *value) : env.Undefined();
}

Napi::Value optionalCount(Napi::Env env, const std::optional<int64_t>& value) {
  return value ? number(env, static_cast<double>(*value)) : env.Undefined();
}

// A class report's rows as { precision, recall, f1, support }, each a number per class.
Napi::Object classReportOf(Napi::Env env, const at::Tensor& report) {
  const auto cells = report.accessor<double, 2>();
  auto object = Napi::Object::New(env);
  const char* names[] = {"precision", "recall", "f1", "support"};
  for (int64_t row = 0; row < 4; ++row) {
    auto values = Napi::Array::New(env, cells.size(1));
    for (int64_t c = 0; c < cells.size(1); ++c) values.Set(c, number(env, cells[row][c]));
    object.Set(names[row], values);
  }
  return object;
}

// Metrics become fields of the result; the confusion matrix a number[][], the class report an object.
void setMetrics(Napi::Env env, Napi::Object& object, const MetricValues& metrics) {
  for (const auto& [name, value] : metrics.scalars) object.Set(name, number(env, value));
  if (metrics.classReport.defined()) object.Set("classificationReport", classReportOf(env, metrics.classReport));
  if (!metrics.confusionMatrix.defined()) return;
  const auto matrix = metrics.confusionMatrix.accessor<int64_t, 2>();
  auto rows = Napi::Array::New(env, matrix.size(0));
  for (int64_t i = 0; i < matrix.size(0); ++i) {
    auto row = Napi::Array::New(env, matrix.size(1));
    for (int64_t j = 0; j < matrix.size(1); ++j) row.Set(j, number(env, static_cast<double>(matrix[i][j])));
    rows.Set(i, row);
  }
  object.Set("confusionMatrix", rows);
}

template <typename Value>
Napi::Array arrayOf(Napi::Env env, const std::vector<Value>& values) {
  auto array = Napi::Array::New(env, values.size());
  for (size_t i = 0; i < values.size(); ++i) array.Set(i, values[i]);
  return array;
}

}  // namespace

Napi::Array toJs(Napi::Env env, const std::vector<std::string>& values) { return arrayOf(env, values); }

Napi::Array toJs(Napi::Env env, const std::vector<double>& values) { return arrayOf(env, values); }

Napi::Object toJs(Napi::Env env, const StepReport& report) {
  auto object = Napi::Object::New(env);
  object.Set("epoch", number(env, static_cast<double>(report.epoch)));
  object.Set("step", number(env, static_cast<double>(report.step)));
  object.Set("stepsInEpoch", optionalCount(env, report.stepsInEpoch));
  object.Set("globalStep", number(env, static_cast<double>(report.globalStep)));
  object.Set("loss", number(env, report.loss));
  object.Set("learningRate", number(env, report.learningRate));
  object.Set("elapsedSeconds", number(env, report.elapsedSeconds));
  object.Set("gradNorm", optionalNumber(env, report.gradNorm));
  object.Set("gradScale", optionalNumber(env, report.gradScale));
  object.Set("skippedSteps", number(env, static_cast<double>(report.skippedSteps)));
  object.Set("learningRates", toJs(env, report.learningRates));
  object.Set("isLogStep", Napi::Boolean::New(env, report.isLogStep));
  return object;
}

Napi::Object toJs(Napi::Env env, const EvalReport& report) {
  auto object = Napi::Object::New(env);
  object.Set("batch", number(env, static_cast<double>(report.batch)));
  object.Set("batches", optionalCount(env, report.batches));
  object.Set("samples", number(env, static_cast<double>(report.samples)));
  object.Set("elapsedSeconds", number(env, report.elapsedSeconds));
  return object;
}

Napi::Object toJs(Napi::Env env, const BatchEvent& event) {
  static const char* const kPhases[] = {"preTrainBatch", "postTrainBatch", "preValBatch", "postValBatch"};
  auto object = Napi::Object::New(env);
  object.Set("hook", Napi::String::New(env, kPhases[static_cast<int>(event.phase)]));
  object.Set("epoch", number(env, static_cast<double>(event.epoch)));
  object.Set("batch", number(env, static_cast<double>(event.batch)));
  object.Set("size", number(env, static_cast<double>(event.size)));
  object.Set("globalStep", number(env, static_cast<double>(event.globalStep)));
  object.Set("loss", optionalNumber(env, event.loss));
  return object;
}

Napi::Object toJs(Napi::Env env, const EpochResult& result) {
  auto object = Napi::Object::New(env);
  object.Set("loss", number(env, result.loss));
  setMetrics(env, object, result.metrics);
  object.Set("steps", number(env, static_cast<double>(result.steps)));
  object.Set("optimizerSteps", number(env, static_cast<double>(result.optimizerSteps)));
  object.Set("skippedSteps", number(env, static_cast<double>(result.skippedSteps)));
  object.Set("samples", number(env, static_cast<double>(result.samples)));
  object.Set("seconds", number(env, result.seconds));
  object.Set("learningRate", number(env, result.learningRate));
  object.Set("stopped", Napi::Boolean::New(env, result.stopped));
  object.Set("nextBatch", number(env, static_cast<double>(result.nextBatch)));
  return object;
}

Napi::Object toJs(Napi::Env env, const EvalResult& result) {
  auto object = Napi::Object::New(env);
  object.Set("loss", number(env, result.loss));
  setMetrics(env, object, result.metrics);
  object.Set("samples", number(env, static_cast<double>(result.samples)));
  object.Set("seconds", number(env, result.seconds));
  return object;
}

Napi::Object toJs(Napi::Env env, const TrainingEngine::FitPlan& plan) {
  auto object = Napi::Object::New(env);
  object.Set("batchesPerEpoch", optionalCount(env, plan.batchesPerEpoch));
  object.Set("optimizerStepsPerEpoch", optionalCount(env, plan.optimizerStepsPerEpoch));
  object.Set("totalSteps", optionalCount(env, plan.totalSteps));
  return object;
}

Napi::Object toJs(Napi::Env env, const WeightsReport& report) {
  auto result = Napi::Object::New(env);
  result.Set("missing", toJs(env, report.missing));
  result.Set("unexpected", toJs(env, report.unexpected));
  return result;
}

Napi::Object toJs(Napi::Env env, const RuntimeInfo& info) {
  auto blas = Napi::Object::New(env);
  blas.Set("vendor", info.blas.vendor);
  blas.Set("library", info.blas.library);
  blas.Set("coreType", info.blas.coreType);
  auto object = Napi::Object::New(env);
  object.Set("torchVersion", info.torchVersion);
  object.Set("cudaAvailable", Napi::Boolean::New(env, info.cudaAvailable));
  object.Set("cudnnAvailable", Napi::Boolean::New(env, info.cudnnAvailable));
  object.Set("cudaDeviceCount", number(env, static_cast<double>(info.cudaDeviceCount)));
  object.Set("numThreads", number(env, static_cast<double>(info.numThreads)));
  object.Set("threadsAdaptive", Napi::Boolean::New(env, info.threadsAdaptive));
  object.Set("blas", blas);
  auto build = Napi::Object::New(env);
  build.Set("torchVersion", info.build.torchVersion);
  build.Set("libtorchSource", info.build.libtorchSource);
  build.Set("torchDir", info.build.torchDir);
  build.Set("cuda", Napi::Boolean::New(env, info.build.cuda));
  build.Set("gloo", Napi::Boolean::New(env, info.build.gloo));
  build.Set("nccl", Napi::Boolean::New(env, info.build.nccl));
  object.Set("build", build);
  object.Set("fusedOptimizers", toJs(env, info.fusedOptimizers));
  object.Set("onednnSgemm", Napi::Boolean::New(env, info.onednnSgemm));
  object.Set("onednnSgemmProducts", Napi::Number::New(env, static_cast<double>(info.onednnSgemmProducts)));
  object.Set("onednnConvolution", Napi::Boolean::New(env, info.onednnConvolution));
  object.Set("onednnMatmul", Napi::Boolean::New(env, info.onednnMatmul));
  object.Set("onednnMatmulProducts", Napi::Number::New(env, static_cast<double>(info.onednnMatmulProducts)));
  object.Set("onednnPlainMatmulProducts", Napi::Number::New(env, static_cast<double>(info.onednnPlainMatmulProducts)));
  object.Set("decodeKernelSteps", Napi::Number::New(env, static_cast<double>(info.decodeKernelSteps)));
  object.Set("kernelThreadHandOffs", Napi::Number::New(env, static_cast<double>(info.kernelThreadHandOffs)));
  return object;
}

namespace {

Napi::Array describeTensors(Napi::Env env, const torch::OrderedDict<std::string, at::Tensor>& tensors,
                            bool parameters) {
  auto array = Napi::Array::New(env, tensors.size());
  uint32_t index = 0;
  for (const auto& item : tensors) {
    auto entry = Napi::Object::New(env);
    entry.Set("name", item.key());
    entry.Set("shape", fromShape(env, item.value().sizes().vec()));
    entry.Set("dtype", dtypeText(item.value().scalar_type()));
    if (parameters) entry.Set("requiresGrad", item.value().requires_grad());
    array.Set(index++, entry);
  }
  return array;
}

}  // namespace

Napi::Object describeModel(Napi::Env env, const Model& model) {
  auto description = Napi::Object::New(env);
  description.Set("parameters", describeTensors(env, model.namedParameters(), true));
  description.Set("buffers", describeTensors(env, model.namedBuffers(), false));
  const auto tied = model.tiedNames();
  auto ties = Napi::Array::New(env, tied.size());
  for (size_t i = 0; i < tied.size(); ++i) {
    auto tie = Napi::Object::New(env);
    tie.Set("name", tied[i].first);
    tie.Set("source", tied[i].second);
    ties.Set(static_cast<uint32_t>(i), tie);
  }
  description.Set("tied", ties);
  return description;
}

}  // namespace firebrand::binding
