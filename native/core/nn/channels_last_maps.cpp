#include "core/nn/channels_last_maps.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/nn/cpu_float.h"
#include "core/nn/simd_rows.h"

namespace firebrand {
namespace {

// Positions summed in float32 before their sum joins the float64 total: the float32 rounding stays that of a
// 64-term sum whatever the map's size.
constexpr int64_t kBlockRows = 64;
// The most positions a max pool's window may have (a 16x16 kernel): its rows' addresses sit on the stack.
constexpr int64_t kMaxWindowRows = 256;

bool channelsLastMap(const at::Tensor& x) {
  return x.defined() && !at::GradMode::is_enabled() && isCpuFloat(x) && x.dim() == 4 && x.numel() > 0 &&
         x.is_contiguous(at::MemoryFormat::ChannelsLast);
}

// A row of values added to a row of sums, or scaled by a row of per-channel factors: 8 lanes at a time where the
// CPU has AVX2 (the compiler's own vectorization of these loops was lost where they were inlined).
using AddRow = void (*)(const float* values, float* sums, int64_t channels);
using ScaleRow = void (*)(const float* values, const float* scale, float* result, int64_t channels);
// The maximum over `count` (>= 1) rows of `channels` values each, channel by channel.
using MaxWindow = void (*)(const float* const* rows, int64_t count, float* maxima, int64_t channels);

void addRowPortable(const float* values, float* sums, int64_t channels) {
  for (int64_t c = 0; c < channels; ++c) sums[c] += values[c];
}

void scaleRowPortable(const float* values, const float* scale, float* result, int64_t channels) {
  for (int64_t c = 0; c < channels; ++c) result[c] = values[c] * scale[c];
}

// Channels [first, channels) by PyTorch's comparison: a NaN replaces the maximum, and nothing replaces a NaN.
void maxChannels(const float* const* rows, int64_t count, float* maxima, int64_t first, int64_t channels) {
  for (int64_t c = first; c < channels; ++c) {
    float maximum = rows[0][c];
    for (int64_t k = 1; k < count; ++k) {
      if (rows[k][c] > maximum || std::isnan(rows[k][c])) maximum = rows[k][c];
    }
    maxima[c] = maximum;
  }
}

void maxWindowPortable(const float* const* rows, int64_t count, float* maxima, int64_t channels) {
  maxChannels(rows, count, maxima, 0, channels);
}

#if defined(__x86_64__)
// max_ps gives its second operand where either is NaN: a NaN value goes in, and an all-ones NaN mask keeps a NaN
// maximum.
FIREBRAND_AVX2 inline __m256 maxKeepingNan(__m256 maximum, __m256 value) {
  return _mm256_or_ps(_mm256_max_ps(maximum, value), _mm256_cmp_ps(maximum, maximum, _CMP_UNORD_Q));
}

// 32 channels at a time in registers across the window's rows, then 8, then one by one.
FIREBRAND_AVX2 void maxWindowAvx2(const float* const* rows, int64_t count, float* maxima, int64_t channels) {
  int64_t c = 0;
  for (; c + 32 <= channels; c += 32) {
    __m256 m0 = _mm256_loadu_ps(rows[0] + c), m1 = _mm256_loadu_ps(rows[0] + c + 8),
           m2 = _mm256_loadu_ps(rows[0] + c + 16), m3 = _mm256_loadu_ps(rows[0] + c + 24);
    for (int64_t k = 1; k < count; ++k) {
      m0 = maxKeepingNan(m0, _mm256_loadu_ps(rows[k] + c));
      m1 = maxKeepingNan(m1, _mm256_loadu_ps(rows[k] + c + 8));
      m2 = maxKeepingNan(m2, _mm256_loadu_ps(rows[k] + c + 16));
      m3 = maxKeepingNan(m3, _mm256_loadu_ps(rows[k] + c + 24));
    }
    _mm256_storeu_ps(maxima + c, m0);
    _mm256_storeu_ps(maxima + c + 8, m1);
    _mm256_storeu_ps(maxima + c + 16, m2);
    _mm256_storeu_ps(maxima + c + 24, m3);
  }
  for (; c + 8 <= channels; c += 8) {
    __m256 m = _mm256_loadu_ps(rows[0] + c);
    for (int64_t k = 1; k < count; ++k) m = maxKeepingNan(m, _mm256_loadu_ps(rows[k] + c));
    _mm256_storeu_ps(maxima + c, m);
  }
  maxChannels(rows, count, maxima, c, channels);
}

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
MaxWindow maxWindow() { return cpuHasFma() ? maxWindowAvx2 : maxWindowPortable; }
#else
AddRow addRow() { return addRowPortable; }
ScaleRow scaleRow() { return scaleRowPortable; }
MaxWindow maxWindow() { return maxWindowPortable; }
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

namespace {

// One output row of a max pool: the maximum over the window's positions inside the map.
struct PoolWindow {
  int64_t height, width, channels;  // the input map's
  int64_t kernel[2], stride[2], padding[2], dilation[2];

  void pool(const float* map, int64_t outY, int64_t outX, float* out, MaxWindow max) const {
    const float* rows[kMaxWindowRows];
    int64_t count = 0;
    for (int64_t ky = 0; ky < kernel[0]; ++ky) {
      const int64_t y = outY * stride[0] - padding[0] + ky * dilation[0];
      if (y < 0 || y >= height) continue;
      for (int64_t kx = 0; kx < kernel[1]; ++kx) {
        const int64_t x = outX * stride[1] - padding[1] + kx * dilation[1];
        if (x >= 0 && x < width) rows[count++] = map + (y * width + x) * channels;
      }
    }
    if (count > 0)
      max(rows, count, out, channels);
    else  // a window of padding only (a dilated one can be): PyTorch's maximum of nothing
      std::fill(out, out + channels, -std::numeric_limits<float>::infinity());
  }
};

}  // namespace

std::optional<at::Tensor> maxPoolMap(const at::Tensor& x, at::IntArrayRef kernel, at::IntArrayRef stride,
                                     at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil) {
  if (!channelsLastMap(x) || ceil || kernel.size() != 2 || stride.size() != 2 || padding.size() != 2 ||
      dilation.size() != 2 || kernel[0] > kMaxWindowRows || kernel[1] > kMaxWindowRows ||
      kernel[0] * kernel[1] > kMaxWindowRows)
    return std::nullopt;
  PoolWindow window{x.size(2), x.size(3), x.size(1), {}, {}, {}, {}};
  int64_t outSizes[2];
  for (int d = 0; d < 2; ++d) {
    if (kernel[d] < 1 || stride[d] < 1 || dilation[d] < 1 || padding[d] < 0 || 2 * padding[d] > kernel[d])
      return std::nullopt;
    window.kernel[d] = kernel[d], window.stride[d] = stride[d], window.padding[d] = padding[d];
    window.dilation[d] = dilation[d];
    outSizes[d] = (x.size(2 + d) + 2 * padding[d] - dilation[d] * (kernel[d] - 1) - 1) / stride[d] + 1;
    if (outSizes[d] < 1) return std::nullopt;
  }
  at::Tensor out = at::empty({x.size(0), window.channels, outSizes[0], outSizes[1]},
                             x.options().memory_format(at::MemoryFormat::ChannelsLast));
  const float* in = x.data_ptr<float>();
  float* pooled = out.data_ptr<float>();
  const int64_t mapSize = window.height * window.width * window.channels, rows = outSizes[0] * outSizes[1];
  const MaxWindow max = maxWindow();
  at::parallel_for(0, x.size(0) * rows, std::max<int64_t>(1, 4096 / window.channels), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / rows, position = row % rows;
      window.pool(in + n * mapSize, position / outSizes[1], position % outSizes[1], pooled + row * window.channels,
                  max);
    }
  });
  return out;
}

}  // namespace firebrand
