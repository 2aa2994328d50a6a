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
  // Both the idle thread and a running task parked in a HookWait wait on it.
  queue_->wake.notify_all();
}

std::function<void()> TaskThread::stepBoundary() const {
  return [queue = queue_] {
    if (queue->betweenSteps.load(std::memory_order_acquire) > 0) runBetweenSteps(*queue);
  };
}

void TaskThread::runBetweenSteps(Queue& queue) {
  std::unique_lock<std::mutex> lock(queue.mutex);
  while (runFrontBetweenSteps(queue, lock)) {
  }
}

bool TaskThread::runFrontBetweenSteps(Queue& queue, std::unique_lock<std::mutex>& lock) {
  // Only from the front: a between-steps task never overtakes one queued before it.
  if (queue.tasks.empty() || !queue.tasks.front().betweenSteps) return false;
  Task task = std::move(queue.tasks.front());
  queue.tasks.pop_front();
  --queue.betweenSteps;
  lock.unlock();
  task.run();
  lock.lock();
  return true;
}

std::function<std::shared_ptr<TaskThread::HookWait>()> TaskThread::hookWaits() const {
  return [queue = queue_] {
    // Parked from here: its task only hands the call to JS before wait(), and a hook may run first.
    std::lock_guard<std::mutex> lock(queue->mutex);
    queue->hookWaiting = queue->parked = true;
    return std::shared_ptr<HookWait>(new HookWait(queue));
  };
}

void TaskThread::HookWait::finish(bool ok) {
  Queue& queue = *queue_;
  {
    std::lock_guard<std::mutex> lock(queue.mutex);
    if (!ok_) ok_ = ok;
  }
  queue.wake.notify_all();
}

bool TaskThread::HookWait::wait() {
  Queue& queue = *queue_;
  std::unique_lock<std::mutex> lock(queue.mutex);
  while (!ok_) {
    queue.parked = false;
    if (runFrontBetweenSteps(queue, lock)) continue;
    queue.parked = true;
    queue.wake.notify_all();  // for runWhileParked
    queue.wake.wait(lock, [&] { return ok_ || (!queue.tasks.empty() && queue.tasks.front().betweenSteps); });
  }
  queue.hookWaiting = queue.parked = false;
  queue.wake.notify_all();
  return *ok_;
}

bool TaskThread::runWhileParked(const std::function<void()>& work) {
  std::unique_lock<std::mutex> lock(queue_->mutex);
  // A hook that awaited a between-steps task may be here before that task has returned.
  queue_->wake.wait(lock, [&] { return !queue_->hookWaiting || queue_->parked; });
  if (!queue_->parked) return false;
  work();
  return true;
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
