#include "core/data/token_windows.h"

#include <ATen/ATen.h>

#include "core/errors.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

std::vector<at::Tensor> checkedDocuments(const std::vector<at::Tensor>& documents, const std::string& owner) {
  if (documents.empty()) throw InvalidArgument(owner + ": no documents given");
  std::vector<at::Tensor> checked;
  for (size_t i = 0; i < documents.size(); ++i) {
    const at::Tensor& document = documents[i];
    const std::string which = documents.size() == 1 ? "tokens" : "documents[" + std::to_string(i) + "]";
    if (document.dim() != 1)
      throw ShapeMismatch(owner + ": " + which + " must be one row of token ids, got " + shapeText(document));
    if (document.is_floating_point() || document.scalar_type() == at::kBool) {
      throw InvalidArgument(owner + ": " + which + " must hold integer token ids, got " +
                            dtypeText(document.scalar_type()));
    }
    checked.push_back(document.to(at::kLong).contiguous());
  }
  return checked;
}

TensorDataset packed(const std::vector<at::Tensor>& documents, const TokenWindowOptions& options, int64_t stride) {
  std::vector<at::Tensor> parts;
  for (size_t i = 0; i < documents.size(); ++i) {
    if (i > 0 && options.separator) parts.push_back(at::full({1}, *options.separator, at::kLong));
    parts.push_back(documents[i]);
  }
  const at::Tensor stream = at::cat(parts).contiguous();
  const int64_t context = options.contextLength;
  if (stream.size(0) < context + 1) {
    throw InvalidArgument(options.owner + ": " + std::to_string(stream.size(0)) +
                          " tokens make no window of contextLength " + std::to_string(context) +
                          " (a window needs contextLength + 1 tokens: its targets are one token later)");
  }
  const int64_t windows = (stream.size(0) - 1 - context) / stride + 1;
  // Views of the one stream: the dataset keeps it alive; batches copy only their windows.
  return TensorDataset(stream.as_strided({windows, context}, {stride, 1}, 0),
                       stream.as_strided({windows, context}, {stride, 1}, 1));
}

TensorDataset separate(const std::vector<at::Tensor>& documents, const TokenWindowOptions& options, int64_t stride) {
  const int64_t context = options.contextLength;
  std::vector<at::Tensor> inputs, targets;
  for (const at::Tensor& document : documents) {
    const int64_t length = document.size(0);
    for (int64_t start = 0; start + 1 < length; start += stride) {
      const int64_t taken = std::min(context, length - 1 - start);
      at::Tensor input = at::full({context}, options.padToken, at::kLong);
      at::Tensor target = at::full({context}, options.ignoreIndex, at::kLong);
      input.narrow(0, 0, taken).copy_(document.narrow(0, start, taken));
      target.narrow(0, 0, taken).copy_(document.narrow(0, start + 1, taken));
      inputs.push_back(input);
      targets.push_back(target);
      if (start + context + 1 >= length) break;  // this window reached the document's end
    }
  }
  if (inputs.empty())
    throw InvalidArgument(options.owner + ": no document has 2 tokens or more, so there is no window to train on");
  return TensorDataset(at::stack(inputs), at::stack(targets));
}

}  // namespace

void checkTokenWindowOptions(const TokenWindowOptions& options) {
  if (options.contextLength < 1)
    throw InvalidArgument(options.owner + ".contextLength: got " + std::to_string(options.contextLength) +
                          ", expected an integer >= 1");
  if (options.stride && *options.stride < 1)
    throw InvalidArgument(options.owner + ".stride: got " + std::to_string(*options.stride) +
                          ", expected an integer >= 1");
}

TensorDataset tokenWindows(const std::vector<at::Tensor>& documents, const TokenWindowOptions& options) {
  checkTokenWindowOptions(options);
  const int64_t stride = options.stride.value_or(options.contextLength);
  const auto checked = checkedDocuments(documents, options.owner);
  return options.packDocuments ? packed(checked, options, stride) : separate(checked, options, stride);
}

}  // namespace firebrand
