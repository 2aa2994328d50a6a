// Shapes and dtypes written the way PyTorch users read them: [64, 1, 28, 28].
#pragma once
#include <ATen/core/Tensor.h>

#include <string>

namespace firebrand {

std::string shapeText(c10::IntArrayRef sizes);
std::string shapeText(const at::Tensor& tensor);
// "float32", "int64": torch's names, not c10's ("Float", "Long").
std::string dtypeText(at::ScalarType dtype);
// "[64, 1, 28, 28] float32"
std::string shapeAndDtypeText(const at::Tensor& tensor);

}  // namespace firebrand
