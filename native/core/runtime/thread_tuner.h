// config.numThreads 'auto': while training, the intra-op thread count that
// steps fastest now. It times a few steps with one thread and with every CPU,
// keeps the faster, and times both again later (less often while the choice holds).
// On busy cores many threads wait at each parallel region for a peer the OS
// descheduled (measured on 2 cores with 2 busy processes, demo CNN: 6 steps/s
// with 2 threads against 41 with 1); on idle ones they win (100 against 62).
#pragma once
#include <chrono>
#include <vector>

namespace firebrand {

class ThreadTuner {
 public:
  // `maxThreads` 1 leaves the count alone.
  explicit ThreadTuner(int maxThreads);
  // On the training thread at an epoch's (or a resumed segment's) start: applies the current
  // count; the time until the first step includes loading, so it is no step's.
  void begin();
  // On the training thread after each optimizer step: may change the count (at::set_num_threads).
  void afterStep();
  int threads() const { return candidates_[current_]; }
  int maxThreads() const { return candidates_.back(); }

 private:
  using Clock = std::chrono::steady_clock;
  void use(size_t candidate);

  std::vector<int> candidates_;  // one, then every CPU
  size_t current_ = 0;
  bool probing_ = true;
  size_t probed_ = 0;            // candidates timed in this probe
  std::vector<double> medians_;  // per candidate, this probe
  std::vector<double> samples_;  // step seconds of the current candidate
  bool warm_ = false;            // the first step after a change is not timed
  Clock::time_point lastStep_;
  Clock::time_point holdUntil_;
  std::chrono::duration<double> hold_{5.0};
  size_t lastWinner_ = 0;
};

}  // namespace firebrand
