#include "core/graph/format_strides.h"

#include <ATen/ATen.h>

#include <vector>

#include "core/errors.h"

namespace firebrand {

std::vector<int64_t> denseStrides(at::IntArrayRef sizes, c10::MemoryFormat format) {
  if (format == at::MemoryFormat::ChannelsLast) return c10::get_channels_last_strides_2d(sizes);
  std::vector<int64_t> rows(sizes.size(), 1);
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 2; d >= 0; --d) rows[d] = rows[d + 1] * sizes[d + 1];
  return rows;
}

at::Tensor withFormatStrides(const at::Tensor& dense, c10::MemoryFormat format) {
  if (dense.suggest_memory_format() == format) return dense;
  if (dense.dim() != 4 || !dense.is_contiguous(format))
    throw InvalidState("firebrand bug: withFormatStrides needs a 4-D tensor dense in the format asked for");
  return dense.as_strided(dense.sizes(), denseStrides(dense.sizes(), format));
}

}  // namespace firebrand
