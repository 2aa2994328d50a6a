// Copies chosen rows (first-dimension entries) of a tensor into a new or a
// reused one: index_select's result, without its per-call dispatch and kernel set-up,
// which dominate when a small model's batches are cut every few microseconds.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>

namespace firebrand {

// Rows `rows` of `source`, in that order. Contiguous CPU tensors are copied
// row by row (a run of consecutive rows in one copy); others go through
// index_select. A row out of range is an error naming it. `into`, when given
// and of the result's dtype and shape (contiguous, on the CPU), receives the
// rows instead of new memory; the caller must hold it exclusively.
at::Tensor gatherRows(const at::Tensor& source, c10::ArrayRef<int64_t> rows, const at::Tensor* into = nullptr);

}  // namespace firebrand
