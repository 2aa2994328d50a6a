// Puts a model in eval mode for a scope and restores the mode it had.
#pragma once
#include "core/model/model.h"

namespace firebrand {

class EvalModeScope {
 public:
  explicit EvalModeScope(Model& model) : model_(model), wasTraining_(model.isTraining()) { model_.setTraining(false); }
  ~EvalModeScope() { model_.setTraining(wasTraining_); }
  EvalModeScope(const EvalModeScope&) = delete;
  EvalModeScope& operator=(const EvalModeScope&) = delete;

 private:
  Model& model_;
  bool wasTraining_;
};

}  // namespace firebrand
