#include "core/nn/onednn_plain_matmul.h"

#include <ATen/ATen.h>

#include <array>
#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "core/errors.h"
#include "core/runtime/onednn_api.h"

namespace firebrand {
namespace {

using onednn::Handle;

// Products under 64 x 64 x 64 multiply-adds stay on the sgemm: at that size the matmul, its four memory
// objects made at each call included, ran as fast as it (145-181 GFLOP/s against 132-164); smaller were not
// measured.
constexpr int64_t kFewestProducts = int64_t{64} * 64 * 64;
// Shapes whose primitives are kept, the least recently used dropped first (a last batch, a new length).
constexpr size_t kShapesKept = 32;

// One shape's primitive and the descriptions of what it reads and writes.
struct PlainMatmul {
  int64_t M, K, N;
  const onednn::Api& a;
  onednn::Owned source{a.memoryDescDestroy}, weight{a.memoryDescDestroy}, destination{a.memoryDescDestroy},
      attr{a.attrDestroy}, desc{a.primitiveDescDestroy}, primitive{a.primitiveDestroy};
  Handle scratchpad = nullptr;  // owned by desc
  size_t scratchpadBytes = 0;

  PlainMatmul(int64_t m, int64_t k, int64_t n, const onednn::Api& api) : M(m), K(k), N(n), a(api) {}

  bool make() {
    const int64_t sourceSizes[] = {M, K}, sourceStrides[] = {K, 1}, weightSizes[] = {K, N}, weightStrides[] = {1, K},
                  destinationSizes[] = {M, N}, destinationStrides[] = {N, 1};
    if (a.memoryDescCreateWithStrides(&source.handle, 2, sourceSizes, onednn::kFloat32, sourceStrides) != 0 ||
        a.memoryDescCreateWithStrides(&weight.handle, 2, weightSizes, onednn::kFloat32, weightStrides) != 0 ||
        a.memoryDescCreateWithStrides(&destination.handle, 2, destinationSizes, onednn::kFloat32, destinationStrides) !=
            0 ||
        a.attrCreate(&attr.handle) != 0 || a.attrSetScratchpadMode(attr.handle, onednn::kScratchpadUser) != 0 ||
        a.matmulCreate(&desc.handle, a.engine, source.handle, weight.handle, nullptr, destination.handle,
                       attr.handle) != 0 ||
        a.primitiveCreate(&primitive.handle, desc.handle) != 0)
      return false;
    scratchpad = a.primitiveDescQueryMd(desc.handle, onednn::kQueryScratchpad, 0);
    scratchpadBytes = scratchpad != nullptr ? a.memoryDescGetSize(scratchpad) : 0;
    return true;
  }
};

std::mutex shapesMutex;
// Most recently used first; null where oneDNN refused the shape. Never destroyed: primitives outlive the
// process's static destructors, which may run after oneDNN's own.
std::list<std::pair<std::array<int64_t, 3>, std::shared_ptr<PlainMatmul>>>& shapes() {
  static auto* kept = new std::list<std::pair<std::array<int64_t, 3>, std::shared_ptr<PlainMatmul>>>();
  return *kept;
}

std::shared_ptr<PlainMatmul> plainMatmulFor(const onednn::Api& a, int64_t M, int64_t K, int64_t N) {
  const std::array<int64_t, 3> key{M, K, N};
  std::lock_guard<std::mutex> lock(shapesMutex);
  auto& kept = shapes();
  for (auto it = kept.begin(); it != kept.end(); ++it) {
    if (it->first != key) continue;
    kept.splice(kept.begin(), kept, it);
    return kept.front().second;
  }
  auto made = std::make_shared<PlainMatmul>(M, K, N, a);
  if (!made->make()) made = nullptr;
  kept.emplace_front(key, made);
  if (kept.size() > kShapesKept) kept.pop_back();
  return made;
}

std::atomic<int64_t> plainProductsComputed{0};

}  // namespace

at::Tensor onednnPlainTimesTransposed(const at::Tensor& rows, const at::Tensor& weight) {
  const onednn::Api* a = onednn::matmulApi();
  const int64_t M = rows.size(0), K = rows.size(1), N = weight.size(0);
  if (a == nullptr || M * K * N < kFewestProducts) return at::Tensor();
  const std::shared_ptr<PlainMatmul> made = plainMatmulFor(*a, M, K, N);
  if (made == nullptr) return at::Tensor();
  at::Tensor out = at::empty({M, N}, rows.options());
  at::Tensor scratchpad;
  if (made->scratchpadBytes > 0)
    scratchpad = at::empty({static_cast<int64_t>(made->scratchpadBytes)}, rows.options().dtype(at::kByte));
  onednn::Owned source(a->memoryDestroy), weights(a->memoryDestroy), destination(a->memoryDestroy),
      scratch(a->memoryDestroy);
  onednn::ExecArg args[4] = {{onednn::kArgSource, nullptr},
                             {onednn::kArgWeights, nullptr},
                             {onednn::kArgDestination, nullptr},
                             {onednn::kArgScratchpad, nullptr}};
  bool ready = a->memoryCreate(&source.handle, made->source.handle, a->engine, rows.data_ptr()) == 0 &&
               a->memoryCreate(&weights.handle, made->weight.handle, a->engine, weight.data_ptr()) == 0 &&
               a->memoryCreate(&destination.handle, made->destination.handle, a->engine, out.data_ptr()) == 0 &&
               (made->scratchpadBytes == 0 ||
                a->memoryCreate(&scratch.handle, made->scratchpad, a->engine, scratchpad.data_ptr()) == 0);
  args[0].memory = source.handle;
  args[1].memory = weights.handle;
  args[2].memory = destination.handle;
  args[3].memory = scratch.handle;
  const int count = made->scratchpadBytes > 0 ? 4 : 3;
  if (!ready || a->primitiveExecute(made->primitive.handle, onednn::threadStream(), count, args) != 0)
    throw InvalidState("oneDNN's matmul failed computing a frozen linear layer's output [" + std::to_string(M) + ", " +
                       std::to_string(N) + "]");
  plainProductsComputed.fetch_add(1, std::memory_order_relaxed);
  return out;
}

int64_t onednnPlainMatmulProducts() { return plainProductsComputed.load(std::memory_order_relaxed); }

}  // namespace firebrand
