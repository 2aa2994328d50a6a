// The part of oneDNN 3's C API that firebrand calls itself, looked up in the oneDNN libtorch links (no
// header or link-time dependency: libtorch 1.13 links oneDNN 2, whose API differs, and wheels hide it).
// The values below are oneDNN 3's ABI (include/oneapi/dnnl/dnnl_types.h), stable within its major version.
#pragma once
#include <cstddef>
#include <cstdint>

namespace firebrand::onednn {

using Handle = void*;  // dnnl_engine_t, dnnl_stream_t, dnnl_memory_t, dnnl_primitive_t, ...
using Status = int;    // dnnl_status_t: 0 on success

// Enumerators and argument numbers of oneDNN 3's headers, by their names there.
enum Value : int {
  kCpuEngine = 1,                  // dnnl_cpu
  kInOrderStream = 1,              // dnnl_stream_in_order
  kFloat32 = 3,                    // dnnl_f32
  kFormatAny = 1,                  // dnnl_format_tag_any
  kForwardInference = 96,          // dnnl_forward_inference
  kConvolutionDirect = 1,          // dnnl_convolution_direct
  kEltwiseRelu = 0x20,             // dnnl_eltwise_relu
  kEltwiseHardsigmoid = 0x28,      // dnnl_eltwise_hardsigmoid
  kEltwiseGeluTanh = 0x2b,         // dnnl_eltwise_gelu_tanh
  kEltwiseSwish = 0x2c,            // dnnl_eltwise_swish
  kEltwiseGeluErf = 0x31,          // dnnl_eltwise_gelu_erf
  kEltwiseHardswish = 0x34,        // dnnl_eltwise_hardswish
  kBinaryAdd = 0x1fff0,            // dnnl_binary_add
  kScratchpadUser = 1,             // dnnl_scratchpad_mode_user
  kQueryWeights = 131,             // dnnl_query_weights_md
  kQueryScratchpad = 136,          // dnnl_query_scratchpad_md
  kArgSource = 1,                  // DNNL_ARG_SRC
  kArgDestination = 17,            // DNNL_ARG_DST
  kArgWeights = 33,                // DNNL_ARG_WEIGHTS
  kArgBias = 41,                   // DNNL_ARG_BIAS
  kArgScratchpad = 80,             // DNNL_ARG_SCRATCHPAD
  kArgFirstPostOpSource1 = 32770,  // DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1 (oneDNN 3's base, 32768)
};

struct ExecArg {
  int arg;
  Handle memory;
};

struct Api {
  Status (*engineCreate)(Handle*, int kind, size_t index);
  Status (*streamCreate)(Handle*, Handle engine, unsigned flags);
  Status (*streamDestroy)(Handle);
  Status (*memoryDescCreateWithStrides)(Handle*, int ndims, const int64_t* dims, int type, const int64_t* strides);
  Status (*memoryDescCreateWithTag)(Handle*, int ndims, const int64_t* dims, int type, int tag);
  Status (*memoryDescDestroy)(Handle);
  size_t (*memoryDescGetSize)(Handle);
  int (*memoryDescEqual)(Handle, Handle);  // 1 where equal
  Status (*memoryCreate)(Handle*, Handle desc, Handle engine, void* data);
  Status (*memorySetDataHandle)(Handle, void* data);
  Status (*memoryGetMemoryDesc)(Handle, Handle* desc);
  Status (*memoryDestroy)(Handle);
  Status (*attrCreate)(Handle*);
  Status (*attrDestroy)(Handle);
  Status (*attrSetScratchpadMode)(Handle, int mode);
  Status (*attrSetPostOps)(Handle, Handle postOps);
  Status (*postOpsCreate)(Handle*);
  Status (*postOpsDestroy)(Handle);
  Status (*postOpsAppendEltwise)(Handle, int algorithm, float alpha, float beta);
  Status (*postOpsAppendBinary)(Handle, int algorithm, Handle source1);
  Status (*convolutionForwardCreate)(Handle*, Handle engine, int prop, int algorithm, Handle source, Handle weights,
                                     Handle bias, Handle destination, const int64_t* strides, const int64_t* dilates,
                                     const int64_t* paddingLeft, const int64_t* paddingRight, Handle attr);
  Status (*matmulCreate)(Handle*, Handle engine, Handle source, Handle weights, Handle bias, Handle destination,
                         Handle attr);
  Status (*reorderCreate)(Handle*, Handle source, Handle sourceEngine, Handle destination, Handle destinationEngine,
                          Handle attr);
  Handle (*primitiveDescQueryMd)(Handle desc, int what, int index);
  Status (*primitiveDescDestroy)(Handle);
  Status (*primitiveCreate)(Handle*, Handle desc);
  Status (*primitiveExecute)(Handle, Handle stream, int count, const ExecArg* args);
  Status (*primitiveDestroy)(Handle);
  Handle engine;  // one CPU engine for the process
};

// Owns one oneDNN object, destroyed by `destroy`.
struct Owned {
  Handle handle = nullptr;
  Status (*destroy)(Handle) = nullptr;
  explicit Owned(Status (*destroyer)(Handle)) : destroy(destroyer) {}
  ~Owned() {
    if (handle != nullptr) destroy(handle);
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
};

// oneDNN 3's API with a CPU engine, or null: no oneDNN 3 in the process, or a oneDNN whose CPU runtime needs
// a threadpool of its caller's.
const Api* api();
// The API where predict's convolutions run on it (unless FIREBRAND_ONEDNN_CONVOLUTION=0), else null.
const Api* convolutionApi();
// The API where predict's linear layers, and frozen layers' outputs in training, run on its matmul (unless
// FIREBRAND_ONEDNN_MATMUL=0), else null.
const Api* matmulApi();
// The calling thread's stream on the engine (oneDNN's CPU streams run in the caller's thread).
Handle threadStream();

}  // namespace firebrand::onednn
