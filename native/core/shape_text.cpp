#include "core/shape_text.h"

#include <c10/core/ScalarType.h>

namespace firebrand {

std::string shapeText(c10::IntArrayRef sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(sizes[i]);
  }
  return out + "]";
}

std::string shapeText(const at::Tensor& tensor) { return shapeText(tensor.sizes()); }

std::string dtypeText(at::ScalarType dtype) {
  std::string name = c10::toString(dtype);
  // c10 names dtypes after C types ("Float"); users know torch's names.
  static const std::pair<const char*, const char*> kTorchNames[] = {
      {"Float", "float32"}, {"Double", "float64"}, {"Half", "float16"}, {"BFloat16", "bfloat16"}, {"Long", "int64"},
      {"Int", "int32"},     {"Short", "int16"},    {"Char", "int8"},    {"Byte", "uint8"},        {"Bool", "bool"}};
  for (const auto& [c10Name, torchName] : kTorchNames) {
    if (name == c10Name) return torchName;
  }
  return name;
}

std::string shapeAndDtypeText(const at::Tensor& tensor) {
  return shapeText(tensor) + " " + dtypeText(tensor.scalar_type());
}

}  // namespace firebrand
