// The learning rates of a trainer's optimizers: set from any thread (a
// callback's setLearningRate while an epoch runs), applied on the training
// thread at the next step boundary, and published for other threads to read
// while an epoch runs (the rates the latest report or batch hook saw).
#pragma once
#include <atomic>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/optim/optimizer_unit.h"

namespace firebrand {

class LearningRateControl {
 public:
  // `units`: the trainer's optimizers, which outlive this.
  explicit LearningRateControl(std::vector<OptimizerUnit>& units) : units_(units) {}
  LearningRateControl(const LearningRateControl&) = delete;
  LearningRateControl& operator=(const LearningRateControl&) = delete;

  // Sets the base learning rate (the optimizer's lr, which schedules scale) of every optimizer, or of
  // the one named, to `lr` for its first group and in proportion for its others, from applyRequested()
  // on (and in later fits). Any thread; `lr` (>= 0) is checked by its TypeScript owner, the trainer.
  void request(double lr, const std::string& optimizerName = "");
  // Applies the rates requested since the last call, and publishes them: the training thread between
  // steps, or the caller while no training runs.
  void applyRequested();
  // Every optimizer's groups' learning rates for the next step, in order, and their names ("adamw",
  // "adamw/pg1", "generator"), for logs.
  std::vector<double> current() const;
  std::vector<std::string> names() const;
  // `rates` (current()'s) become what other threads read.
  void publish(std::vector<double> rates);
  void publish() { publish(current()); }
  // As of the latest publish: what another thread may read while training runs.
  std::vector<double> published() const;
  std::vector<std::string> publishedNames() const;

 private:
  std::vector<OptimizerUnit>& units_;
  // request()'s rates, by optimizer name ("" for all), not yet applied.
  std::mutex requestMutex_;
  std::vector<std::pair<std::string, double>> requests_;
  std::atomic<bool> requested_{false};
  mutable std::mutex publishedMutex_;
  std::vector<double> published_;
  std::vector<std::string> publishedNames_;
};

}  // namespace firebrand
