#include "core/nn/channels_last_maps.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <vector>

#include "core/nn/simd_rows.h"

namespace firebrand {
namespace {

// Positions summed in float32 before their sum joins the float64 total: the float32 rounding stays that of a
// 64-term sum whatever the map's size.
constexpr int64_t kBlockRows = 64;

bool channelsLastMap(const at::Tensor& x) {
  return x.defined() && !at::GradMode::is_enabled() && x.scalar_type() == at::kFloat && x.device().is_cpu() &&
         x.dim() == 4 && x.numel() > 0 && x.is_contiguous(at::MemoryFormat::ChannelsLast);
}

// A row of values added to a row of sums, or scaled by a row of per-channel factors: 8 lanes at a time where the
// CPU has AVX2 (the compiler's own vectorization of these loops was lost where they were inlined).
using AddRow = void (*)(const float* values, float* sums, int64_t channels);
using ScaleRow = void (*)(const float* values, const float* scale, float* result, int64_t channels);

void addRowPortable(const float* values, float* sums, int64_t channels) {
  for (int64_t c = 0; c < channels; ++c) sums[c] += values[c];
}

void scaleRowPortable(const float* values, const float* scale, float* result, int64_t channels) {
  for (int64_t c = 0; c < channels; ++c) result[c] = values[c] * scale[c];
}

#if defined(__x86_64__)
FIREBRAND_AVX2 void addRowAvx2(const float* values, float* sums, int64_t channels) {
  int64_t c = 0;
  for (; c + 8 <= channels; c += 8)
    _mm256_storeu_ps(sums + c, _mm256_add_ps(_mm256_loadu_ps(sums + c), _mm256_loadu_ps(values + c)));
  addRowPortable(values + c, sums + c, channels - c);
}

FIREBRAND_AVX2 void scaleRowAvx2(const float* values, const float* scale, float* result, int64_t channels) {
  int64_t c = 0;
  for (; c + 8 <= channels; c += 8)
    _mm256_storeu_ps(result + c, _mm256_mul_ps(_mm256_loadu_ps(values + c), _mm256_loadu_ps(scale + c)));
  scaleRowPortable(values + c, scale + c, result + c, channels - c);
}

AddRow addRow() { return cpuHasFma() ? addRowAvx2 : addRowPortable; }
ScaleRow scaleRow() { return cpuHasFma() ? scaleRowAvx2 : scaleRowPortable; }
#else
AddRow addRow() { return addRowPortable; }
ScaleRow scaleRow() { return scaleRowPortable; }
#endif

// The mean of each channel over `rows` positions of `channels` values each.
void poolRows(const float* x, int64_t rows, int64_t channels, float* out) {
  const AddRow add = addRow();
  std::vector<double> total(channels, 0.0);
  std::vector<float> block(channels);
  for (int64_t first = 0; first < rows; first += kBlockRows) {
    std::fill(block.begin(), block.end(), 0.0f);
    for (int64_t row = first; row < std::min(rows, first + kBlockRows); ++row)
      add(x + row * channels, block.data(), channels);
    for (int64_t c = 0; c < channels; ++c) total[c] += block[c];
  }
  for (int64_t c = 0; c < channels; ++c) out[c] = static_cast<float>(total[c] / static_cast<double>(rows));
}

}  // namespace

std::optional<at::Tensor> globalAveragePool(const at::Tensor& x) {
  if (!channelsLastMap(x)) return std::nullopt;
  const int64_t batch = x.size(0), channels = x.size(1), rows = x.size(2) * x.size(3);
  at::Tensor out = at::empty({batch, channels, 1, 1}, x.options().memory_format(at::MemoryFormat::ChannelsLast));
  const float* in = x.data_ptr<float>();
  float* pooled = out.data_ptr<float>();
  at::parallel_for(0, batch, 1, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) poolRows(in + n * rows * channels, rows, channels, pooled + n * channels);
  });
  return out;
}

std::optional<at::Tensor> gateChannels(const at::Tensor& x, const at::Tensor& gate) {
  if (!channelsLastMap(x) || !gate.defined() || gate.scalar_type() != at::kFloat || !gate.device().is_cpu() ||
      gate.dim() != 4 || gate.size(1) != x.size(1) || gate.size(2) != 1 || gate.size(3) != 1 ||
      (gate.size(0) != x.size(0) && gate.size(0) != 1) || gate.stride(1) != 1)
    return std::nullopt;
  const int64_t channels = x.size(1), rows = x.size(2) * x.size(3), gateStride = gate.size(0) == 1 ? 0 : gate.stride(0);
  at::Tensor out = at::empty_like(x, at::MemoryFormat::ChannelsLast);
  const float* in = x.data_ptr<float>();
  const float* gates = gate.data_ptr<float>();
  float* product = out.data_ptr<float>();
  // Over all positions of all maps, a few thousand values a task at least.
  const int64_t grain = std::max<int64_t>(1, 4096 / channels);
  const ScaleRow scale = scaleRow();
  at::parallel_for(0, x.size(0) * rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row)
      scale(in + row * channels, gates + (row / rows) * gateStride, product + row * channels, channels);
  });
  return out;
}

}  // namespace firebrand
