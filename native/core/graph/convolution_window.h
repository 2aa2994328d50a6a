// The extent of a convolution's kernel window along one spatial dimension, dilation included, as PyTorch
// sizes it: what the padded input must hold at least, and what the output's size is counted from.
#pragma once
#include <cstdint>

namespace firebrand {

inline int64_t windowSpan(int64_t kernel, int64_t dilation) { return (kernel - 1) * dilation + 1; }

}  // namespace firebrand
