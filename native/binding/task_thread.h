// A long-lived thread that runs one trainer's work, a task at a time. On
// libuv's pool each epoch ran on whichever pool thread was free: cold caches
// and libtorch thread-locals at every epoch (measured: tiny steps ~2% slower
// than on one thread) and a malloc arena per pool thread, each keeping an
// epoch's peak of activations. The pool thread that schedules a task now
// only waits for it here.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

namespace firebrand::binding {

class TaskThread {
 public:
  TaskThread() = default;
  TaskThread(const TaskThread&) = delete;
  TaskThread& operator=(const TaskThread&) = delete;
  // Runs what is queued, then joins.
  ~TaskThread();

  // Runs `task` on this thread; the caller waits and gets its result, or its exception.
  template <typename Task>
  auto call(Task task) -> decltype(task()) {
    std::packaged_task<decltype(task())()> packaged(std::move(task));
    auto result = packaged.get_future();
    post([&packaged] { packaged(); });
    return result.get();
  }

 private:
  // Shared with the thread, which may outlive this object if it is dropped from a task.
  struct Queue {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<std::function<void()>> tasks;
    bool stopping = false;
  };

  void post(std::function<void()> task);
  static void runTasks(const std::shared_ptr<Queue>& queue);

  std::shared_ptr<Queue> queue_ = std::make_shared<Queue>();
  std::thread thread_;  // started by the first task
};

}  // namespace firebrand::binding
