#include "binding/task_thread.h"

namespace firebrand::binding {

TaskThread::~TaskThread() {
  bool idle = false;
  {
    std::lock_guard<std::mutex> lock(queue_->mutex);
    queue_->stopping = true;
    idle = queue_->tasks.empty() && !queue_->running;
  }
  queue_->wake.notify_one();
  if (!thread_.joinable()) return;
  // Not idle includes being dropped from one of its own tasks, which it cannot join.
  if (idle) {
    thread_.join();
  } else {
    thread_.detach();  // it ends once its tasks are done
  }
}

void TaskThread::post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(queue_->mutex);
    queue_->tasks.push_back(std::move(task));
    if (!thread_.joinable()) thread_ = std::thread([queue = queue_] { runTasks(queue); });
  }
  queue_->wake.notify_one();
}

void TaskThread::runTasks(const std::shared_ptr<Queue>& queue) {
  std::unique_lock<std::mutex> lock(queue->mutex);
  while (true) {
    queue->wake.wait(lock, [&] { return queue->stopping || !queue->tasks.empty(); });
    if (queue->tasks.empty()) return;  // stopping, and nothing left to run
    std::function<void()> task = std::move(queue->tasks.front());
    queue->tasks.pop_front();
    queue->running = true;
    lock.unlock();
    task();
    lock.lock();
    queue->running = false;
  }
}

}  // namespace firebrand::binding
