#include "binding/runtime_exports.h"

#include "binding/convert.h"
#include "binding/js_errors.h"
#include "binding/results.h"
#include "binding/task_thread.h"
#include "core/graph/decode_kernels.h"
#include "core/graph/onednn_linear.h"
#include "core/graph/op_row.h"
#include "core/nn/layer_row.h"
#include "core/nn/onednn_plain_matmul.h"
#include "core/nn/onednn_sgemm.h"
#include "core/optim/optimizer_factory.h"
#include "core/runtime/kernel_settings.h"
#include "core/runtime/onednn_api.h"
#include "core/runtime/runtime_info.h"

namespace firebrand::binding {
namespace {

Napi::Value RuntimeInfoValue(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    RuntimeInfo runtime = runtimeInfo();
    runtime.fusedOptimizers = fusedOptimizers();
    runtime.onednnSgemm = onednnSgemmAvailable();
    runtime.onednnSgemmProducts = onednnSgemmProducts();
    runtime.onednnConvolution = onednn::convolutionApi() != nullptr;
    runtime.onednnMatmul = onednn::matmulApi() != nullptr;
    runtime.onednnMatmulProducts = onednnMatmulProducts();
    runtime.onednnPlainMatmulProducts = onednnPlainMatmulProducts();
    runtime.decodeKernelSteps = decodeKernelSteps();
    runtime.kernelThreadHandOffs = TaskThread::kernelThreadHandOffs();
    return toJs(info.Env(), runtime);
  });
}

void SetNumThreads(const Napi::CallbackInfo& info) {
  guard(info.Env(), [&] {
    setNumThreads(toInteger(info[0], "numThreads", 1), !info[1].IsUndefined() && toBoolean(info[1], "adaptive"));
    limitKernelThreadsOfThisThread();  // at::set_num_threads set this (the JS) thread's count too: see Init
  });
}

void ManualSeed(const Napi::CallbackInfo& info) {
  guard(info.Env(), [&] { manualSeed(static_cast<uint64_t>(toInteger(info[0], "seed", 0))); });
}

void UseDeterministicAlgorithms(const Napi::CallbackInfo& info) {
  guard(info.Env(), [&] { useDeterministicAlgorithms(toBoolean(info[0], "deterministic")); });
}

// Rows and the forms each has ({ name, forms: ['run', 'torchScript', 'onnx'] }), for the test that keeps
// TypeScript's ops and layers and C++'s rows equal.
template <typename Row, typename Run>
Napi::Value rowForms(Napi::Env env, const std::vector<const Row*>& rows, std::string Row::*name, Run Row::*run) {
  Napi::Array out = Napi::Array::New(env);
  for (const Row* row : rows) {
    Napi::Array forms = Napi::Array::New(env);
    if (row->*run) forms.Set(forms.Length(), "run");
    if (row->torchScript) forms.Set(forms.Length(), "torchScript");
    if (row->onnx) forms.Set(forms.Length(), "onnx");
    Napi::Object item = Napi::Object::New(env);
    item.Set("name", row->*name);
    item.Set("forms", forms);
    out.Set(out.Length(), item);
  }
  return out;
}

Napi::Value GraphOps(const Napi::CallbackInfo& info) {
  return guard(info.Env(),
               [&]() -> Napi::Value { return rowForms(info.Env(), allOps(), &OpRow::name, &OpRow::compile); });
}

Napi::Value GraphLayers(const Napi::CallbackInfo& info) {
  return guard(info.Env(),
               [&]() -> Napi::Value { return rowForms(info.Env(), allLayers(), &LayerRow::type, &LayerRow::build); });
}

// The kernel settings and the values each takes ({ name, values }), for kernel-settings.ts's warning.
Napi::Value KernelSettings(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    Napi::Array out = Napi::Array::New(info.Env());
    for (const KernelSetting& setting : kernelSettings()) {
      Napi::Object item = Napi::Object::New(info.Env());
      item.Set("name", setting.name);
      item.Set("values", toJs(info.Env(), setting.values));
      out.Set(out.Length(), item);
    }
    return out;
  });
}

}  // namespace

void exportRuntime(Napi::Env env, Napi::Object exports) {
  exports.Set("runtimeInfo", Napi::Function::New<RuntimeInfoValue>(env, "runtimeInfo"));
  exports.Set("setNumThreads", Napi::Function::New<SetNumThreads>(env, "setNumThreads"));
  exports.Set("manualSeed", Napi::Function::New<ManualSeed>(env, "manualSeed"));
  exports.Set("kernelSettings", Napi::Function::New<KernelSettings>(env, "kernelSettings"));
  exports.Set("graphOps", Napi::Function::New<GraphOps>(env, "graphOps"));
  exports.Set("graphLayers", Napi::Function::New<GraphLayers>(env, "graphLayers"));
  exports.Set("useDeterministicAlgorithms",
              Napi::Function::New<UseDeterministicAlgorithms>(env, "useDeterministicAlgorithms"));
}

}  // namespace firebrand::binding
