// Puts a model in eval mode for a scope and restores the mode it had.
#pragma once
#include "core/model/model.h"

namespace firebrand {

class EvalModeScope {
 public:
  // A model in eval mode already is left alone (generation enters this scope at every token).
  explicit EvalModeScope(Model& model) : model_(model), wasTraining_(model.isTraining()) {
    if (wasTraining_) model_.setTraining(false);
  }
  ~EvalModeScope() {
    if (wasTraining_) model_.setTraining(true);
  }
  EvalModeScope(const EvalModeScope&) = delete;
  EvalModeScope& operator=(const EvalModeScope&) = delete;

 private:
  Model& model_;
  bool wasTraining_;
};

}  // namespace firebrand
