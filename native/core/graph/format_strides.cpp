#include "core/graph/format_strides.h"

#include <ATen/ATen.h>

#include <vector>

#include "core/errors.h"

namespace firebrand {

at::Tensor withFormatStrides(const at::Tensor& dense, c10::MemoryFormat format) {
  if (dense.suggest_memory_format() == format) return dense;
  if (dense.dim() != 4 || !dense.is_contiguous(format))
    throw InvalidState("firebrand bug: withFormatStrides needs a 4-D tensor dense in the format asked for");
  if (format == at::MemoryFormat::ChannelsLast)
    return dense.as_strided(dense.sizes(), c10::get_channels_last_strides_2d(dense.sizes()));
  std::vector<int64_t> rows(4, 1);
  for (int64_t d = 2; d >= 0; --d) rows[d] = rows[d + 1] * dense.size(d + 1);
  return dense.as_strided(dense.sizes(), rows);
}

}  // namespace firebrand
