#include "core/model/model.h"

#include "core/errors.h"
#include "core/shape_text.h"

namespace firebrand {

TensorDict Model::trainingStep(const TensorDict&) {
  throw InvalidState("this model defines no training_step");
}

TensorDict Model::validationStep(const TensorDict&) {
  throw InvalidState("this model defines no validation_step");
}

std::string Model::describeInputs(const Batch& batch) const {
  return "samples of shape " + shapeText(batch.inputs().sizes().slice(1));
}

std::vector<at::Tensor> Model::parameters() const { return namedParameters().values(); }

int64_t Model::parameterCount() const {
  int64_t count = 0;
  for (const auto& parameter : parameters()) count += parameter.numel();
  return count;
}

}  // namespace firebrand
