#include "core/runtime/thread_tuner.h"

#include <ATen/Parallel.h>

#include <algorithm>

namespace firebrand {
namespace {

constexpr size_t kTimedSteps = 3;
// More threads' probe ends early when two timed steps take this many times one thread's median,
// or their first step (which starts the threads) the second factor.
constexpr double kLosingFactor = 1.5;
constexpr double kLosingWarmFactor = 3.0;
constexpr std::chrono::duration<double> kLongestHold{80.0};

double median(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

}  // namespace

ThreadTuner::ThreadTuner(int maxThreads) : candidates_{1, maxThreads}, medians_(2) {
  if (maxThreads <= 1) candidates_ = {1};
}

void ThreadTuner::begin() {
  use(current_);
  lastStep_ = Clock::now();
  warm_ = false;
}

void ThreadTuner::use(size_t candidate) {
  current_ = candidate;
  if (at::get_num_threads() != threads()) at::set_num_threads(threads());
  samples_.clear();
  warm_ = false;
}

void ThreadTuner::afterStep() {
  const Clock::time_point now = Clock::now();
  const double seconds = std::chrono::duration<double>(now - lastStep_).count();
  lastStep_ = now;
  if (candidates_.size() == 1) return;
  if (!probing_) {
    if (now < holdUntil_) return;
    probing_ = true;
    probed_ = 0;
    use(0);
    return;
  }
  // One thread is timed first; more threads that are already far slower stop early, so that a
  // probe on busy cores costs a few steps of the slow kind. One slow step (a GC pause, a report)
  // does not end it: the first step far slower, or two timed ones slower, do.
  const double baseline = medians_[0];
  if (!warm_) {
    warm_ = true;  // a new thread count's first step starts its threads
    if (current_ == 0 || seconds <= kLosingWarmFactor * baseline) return;
    samples_.push_back(seconds);
  } else {
    samples_.push_back(seconds);
  }
  const bool losing = current_ > 0 && samples_.size() <= 2 &&
                      *std::min_element(samples_.begin(), samples_.end()) > kLosingFactor * baseline &&
                      (samples_.size() == 2 || seconds > kLosingWarmFactor * baseline);
  if (samples_.size() < kTimedSteps && !losing) return;
  medians_[current_] = median(samples_);
  if (++probed_ < candidates_.size()) {
    use(current_ + 1);
    return;
  }
  const size_t winner = medians_[1] < medians_[0] ? 1 : 0;
  // The same answer again: measure less often; a change: sooner.
  hold_ = winner == lastWinner_ ? std::min(hold_ * 2.0, kLongestHold) : std::chrono::duration<double>(5.0);
  lastWinner_ = winner;
  probing_ = false;
  holdUntil_ = now + std::chrono::duration_cast<Clock::duration>(hold_);
  use(winner);
  warm_ = true;
}

}  // namespace firebrand
