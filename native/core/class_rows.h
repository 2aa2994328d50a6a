// Scores with classes on dim 1 ([N, C, d...], as cross_entropy takes them) whose memory holds the classes
// last: a language model's [N, C, T] logits are a view of its [N, T, C] output.
#pragma once
#include <ATen/ATen.h>

#include <utility>

namespace firebrand {

// The scores as [N * d..., C] rows and the targets as [N * d...], when that is a view: what transformers'
// loss scores (logits.view(-1, vocabulary)), and what a row-wise kernel reads in order, where classes on dim 1
// would be copied or read across rows. Otherwise both as they are.
inline std::pair<at::Tensor, at::Tensor> classRows(const at::Tensor& scores, const at::Tensor& targets) {
  if (scores.dim() < 3 || targets.dim() != scores.dim() - 1) return {scores, targets};
  at::Tensor rows = scores.movedim(1, -1);
  if (!rows.is_contiguous()) return {scores, targets};
  return {rows.reshape({-1, scores.size(1)}), targets.reshape({-1})};
}

}  // namespace firebrand
