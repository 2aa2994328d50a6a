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

void TaskThread::post(std::function<void()> task) { push({std::move(task), false}); }

void TaskThread::postBetweenSteps(std::function<void()> task) { push({std::move(task), true}); }

void TaskThread::push(Task task) {
  {
    std::lock_guard<std::mutex> lock(queue_->mutex);
    if (task.betweenSteps) ++queue_->betweenSteps;
    queue_->tasks.push_back(std::move(task));
    if (!thread_.joinable()) thread_ = std::thread([queue = queue_] { runTasks(queue); });
  }
  queue_->wake.notify_one();
}

std::function<void()> TaskThread::stepBoundary() const {
  return [queue = queue_] {
    if (queue->betweenSteps.load(std::memory_order_acquire) > 0) runBetweenSteps(*queue);
  };
}

void TaskThread::runBetweenSteps(Queue& queue) {
  std::unique_lock<std::mutex> lock(queue.mutex);
  // Only from the front: a between-steps task never overtakes one queued before it.
  while (!queue.tasks.empty() && queue.tasks.front().betweenSteps) {
    Task task = std::move(queue.tasks.front());
    queue.tasks.pop_front();
    --queue.betweenSteps;
    lock.unlock();
    task.run();
    lock.lock();
  }
}

void TaskThread::runTasks(const std::shared_ptr<Queue>& queue) {
  std::unique_lock<std::mutex> lock(queue->mutex);
  while (true) {
    queue->wake.wait(lock, [&] { return queue->stopping || !queue->tasks.empty(); });
    if (queue->tasks.empty()) return;  // stopping, and nothing left to run
    Task task = std::move(queue->tasks.front());
    queue->tasks.pop_front();
    if (task.betweenSteps) --queue->betweenSteps;
    queue->running = true;
    lock.unlock();
    task.run();
    lock.lock();
    queue->running = false;
  }
}

}  // namespace firebrand::binding
