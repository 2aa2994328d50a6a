// Next-token training data from token ids: windows of contextLength tokens,
// each with the same window one token later as its targets. Documents are
// either packed into one stream (optionally joined by a separator token), whose
// windows are strided views of it (no copy per window), or windowed one by one,
// a document's last window padded (targets with ignoreIndex, which the loss skips).
#pragma once
#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <vector>

#include "core/data/tensor_dataset.h"

namespace firebrand {

struct TokenWindowOptions {
  int64_t contextLength = 0;
  std::optional<int64_t> stride;     // default: contextLength (windows side by side)
  std::optional<int64_t> separator;  // packed documents: a token between them
  bool packDocuments = true;
  int64_t padToken = 0;              // unpacked: what fills a short window's inputs
  int64_t ignoreIndex = -100;        // unpacked: what fills its targets
  std::string owner = "fromTokens";  // what errors name
};

// Fields "input" and "target", int64 [windows, contextLength]. Errors name the option or document at fault.
TensorDataset tokenWindows(const std::vector<at::Tensor>& documents, const TokenWindowOptions& options);
// The options' own ranges (tokenWindows checks them too), for a caller that reads the tokens later.
void checkTokenWindowOptions(const TokenWindowOptions& options);

}  // namespace firebrand
