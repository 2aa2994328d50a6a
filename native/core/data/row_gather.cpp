#include "core/data/row_gather.h"

#include <ATen/ATen.h>
#include <c10/util/SmallVector.h>

#include <cstring>
#include <type_traits>

#include "core/errors.h"

namespace firebrand {
namespace {

void checkRows(c10::ArrayRef<int64_t> rows, int64_t count) {
  for (const int64_t row : rows) {
    if (row < 0 || row >= count) {
      throw InvalidArgument("row " + std::to_string(row) + " is out of range for " + std::to_string(count) + " rows");
    }
  }
}

// A row size known at compile time (std::integral_constant) turns each row's
// copy into a few moves instead of a memcpy call (small models' rows are tens of bytes).
template <typename RowBytes>
void copyRowsOf(const char* from, c10::ArrayRef<int64_t> rows, RowBytes rowBytes, char* to) {
  for (const int64_t row : rows) {
    std::memcpy(to, from + row * rowBytes, rowBytes);
    to += rowBytes;
  }
}

template <size_t kBytes>
using Bytes = std::integral_constant<size_t, kBytes>;

void copyRows(const char* from, c10::ArrayRef<int64_t> rows, size_t rowBytes, char* to) {
  switch (rowBytes) {
    case 4:
      return copyRowsOf(from, rows, Bytes<4>{}, to);
    case 8:
      return copyRowsOf(from, rows, Bytes<8>{}, to);
    case 16:
      return copyRowsOf(from, rows, Bytes<16>{}, to);
    case 32:
      return copyRowsOf(from, rows, Bytes<32>{}, to);
    case 64:
      return copyRowsOf(from, rows, Bytes<64>{}, to);
    case 128:
      return copyRowsOf(from, rows, Bytes<128>{}, to);
    default:
      return copyRowsOf(from, rows, rowBytes, to);
  }
}

bool consecutive(c10::ArrayRef<int64_t> rows) {
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i] != rows[0] + static_cast<int64_t>(i)) return false;
  }
  return true;
}

}  // namespace

at::Tensor gatherRows(const at::Tensor& source, c10::ArrayRef<int64_t> rows, const at::Tensor* into) {
  checkRows(rows, source.size(0));
  const auto count = static_cast<int64_t>(rows.size());
  if (!source.device().is_cpu() || source.layout() != at::kStrided || !source.is_contiguous() || count == 0) {
    const at::Tensor index = at::tensor(rows, at::TensorOptions().dtype(at::kLong)).to(source.device());
    return source.index_select(0, index);
  }
  c10::SmallVector<int64_t, 6> shape(source.sizes().begin(), source.sizes().end());
  shape[0] = count;
  const bool fits = into != nullptr && into->defined() && into->device().is_cpu() && into->is_contiguous() &&
                    into->scalar_type() == source.scalar_type() && into->sizes() == c10::IntArrayRef(shape);
  at::Tensor gathered = fits ? *into : at::empty(shape, source.options());
  const size_t rowBytes = static_cast<size_t>(source.stride(0)) * source.element_size();
  const auto* from = static_cast<const char*>(source.data_ptr());
  auto* to = static_cast<char*>(gathered.data_ptr());
  if (consecutive(rows)) {
    std::memcpy(to, from + rows[0] * rowBytes, rowBytes * rows.size());
    return gathered;
  }
  copyRows(from, rows, rowBytes, to);
  return gathered;
}

}  // namespace firebrand
