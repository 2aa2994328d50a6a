// A long-lived thread that runs one trainer's (or inference model's) work, a
// task at a time. On libuv's pool each epoch ran on whichever pool thread was
// free: cold caches and libtorch thread-locals at every epoch (measured: tiny
// steps ~3% slower than on one thread) and a malloc arena per pool thread,
// each keeping an epoch's peak of activations.
//
// Short tasks may be posted as "between steps" (a prediction during a fit):
// a long task (an epoch) that calls the function stepBoundary() returns runs
// them at its step boundaries instead of making them wait for its end.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace firebrand::binding {

class TaskThread {
 public:
  TaskThread() = default;
  TaskThread(const TaskThread&) = delete;
  TaskThread& operator=(const TaskThread&) = delete;
  // Joins the thread when it is idle; else lets it finish its tasks alone
  // (a process exiting mid-epoch must not wait for the epoch).
  ~TaskThread();

  // Queues `task` to run on this thread after those before it; it must not throw.
  void post(std::function<void()> task);
  // As post, and the running task may run it at its next step boundary.
  void postBetweenSteps(std::function<void()> task);
  // For the running task to call at its step boundaries: runs the between-steps
  // tasks at the front of the queue (in order; an atomic load when there are none).
  std::function<void()> stepBoundary() const;

 private:
  struct Task {
    std::function<void()> run;
    bool betweenSteps = false;
  };
  // Shared with the thread, which may outlive this object.
  struct Queue {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<Task> tasks;
    std::atomic<int> betweenSteps{0};  // between-steps tasks queued
    bool running = false;  // a task is running
    bool stopping = false;
  };

  void push(Task task);
  static void runTasks(const std::shared_ptr<Queue>& queue);
  static void runBetweenSteps(Queue& queue);

  std::shared_ptr<Queue> queue_ = std::make_shared<Queue>();
  std::thread thread_;  // started by the first task
};

}  // namespace firebrand::binding
