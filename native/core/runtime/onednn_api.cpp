#include "core/runtime/onednn_api.h"

#include <dlfcn.h>

#include "core/runtime/kernel_settings.h"

namespace firebrand::onednn {
namespace {

struct Version {  // dnnl_version_t
  int major, minor, patch;
  const char* hash;
  unsigned cpuRuntime, gpuRuntime;
};
constexpr unsigned kThreadpoolRuntime = 8;  // DNNL_RUNTIME_THREADPOOL: its streams need the caller's pool

template <typename F>
bool find(F& function, const char* name) {
  function = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
  return function != nullptr;
}

bool resolve(Api& a) {
  using VersionOf = const Version* (*)();
  VersionOf version = nullptr;
  if (!find(version, "dnnl_version") || version()->major != 3 || version()->cpuRuntime == kThreadpoolRuntime)
    return false;
  return find(a.engineCreate, "dnnl_engine_create") && find(a.streamCreate, "dnnl_stream_create") &&
         find(a.streamDestroy, "dnnl_stream_destroy") &&
         find(a.memoryDescCreateWithStrides, "dnnl_memory_desc_create_with_strides") &&
         find(a.memoryDescCreateWithTag, "dnnl_memory_desc_create_with_tag") &&
         find(a.memoryDescDestroy, "dnnl_memory_desc_destroy") &&
         find(a.memoryDescGetSize, "dnnl_memory_desc_get_size") && find(a.memoryDescEqual, "dnnl_memory_desc_equal") &&
         find(a.memoryGetMemoryDesc, "dnnl_memory_get_memory_desc") && find(a.memoryCreate, "dnnl_memory_create") &&
         find(a.memorySetDataHandle, "dnnl_memory_set_data_handle") && find(a.memoryDestroy, "dnnl_memory_destroy") &&
         find(a.attrCreate, "dnnl_primitive_attr_create") && find(a.attrDestroy, "dnnl_primitive_attr_destroy") &&
         find(a.attrSetScratchpadMode, "dnnl_primitive_attr_set_scratchpad_mode") &&
         find(a.attrSetPostOps, "dnnl_primitive_attr_set_post_ops") && find(a.postOpsCreate, "dnnl_post_ops_create") &&
         find(a.postOpsDestroy, "dnnl_post_ops_destroy") &&
         find(a.postOpsAppendEltwise, "dnnl_post_ops_append_eltwise") &&
         find(a.postOpsAppendBinary, "dnnl_post_ops_append_binary") &&
         find(a.convolutionForwardCreate, "dnnl_convolution_forward_primitive_desc_create") &&
         find(a.matmulCreate, "dnnl_matmul_primitive_desc_create") &&
         find(a.reorderCreate, "dnnl_reorder_primitive_desc_create") &&
         find(a.primitiveDescQueryMd, "dnnl_primitive_desc_query_md") &&
         find(a.primitiveDescDestroy, "dnnl_primitive_desc_destroy") &&
         find(a.primitiveCreate, "dnnl_primitive_create") && find(a.primitiveExecute, "dnnl_primitive_execute") &&
         find(a.primitiveDestroy, "dnnl_primitive_destroy") && a.engineCreate(&a.engine, kCpuEngine, 0) == 0;
}

}  // namespace

const Api* api() {
  static const Api* const found = [] {
    static Api a{};
    return resolve(a) ? &a : nullptr;
  }();
  return found;
}

const Api* convolutionApi() {
  static const Api* const found = kernelSetting("FIREBRAND_ONEDNN_CONVOLUTION") != "0" ? api() : nullptr;
  return found;
}

const Api* matmulApi() {
  static const Api* const found = kernelSetting("FIREBRAND_ONEDNN_MATMUL") != "0" ? api() : nullptr;
  return found;
}

Handle threadStream() {
  // Made once per thread, destroyed with it: oneDNN's CPU work is done when a call returns.
  struct Stream {
    Handle handle = nullptr;
    Stream() { api()->streamCreate(&handle, api()->engine, kInOrderStream); }
    ~Stream() {
      if (handle != nullptr) api()->streamDestroy(handle);
    }
  };
  thread_local const Stream stream;
  return stream.handle;
}

}  // namespace firebrand::onednn
