#include "binding/task_thread.h"

#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/runtime/runtime_info.h"

namespace firebrand::binding {

namespace {
std::atomic<int64_t> handOffs{0};
}  // namespace

int64_t TaskThread::kernelThreadHandOffs() { return handOffs.load(); }

struct TaskThread::Registry {
  std::mutex mutex;
  std::vector<std::shared_ptr<Queue>> queues;
};

TaskThread::Registry& TaskThread::registry() {
  static Registry* const live = new Registry();  // leaked: the process's exit still reads it
  return *live;
}

TaskThread::TaskThread(std::shared_ptr<NapiGate> gate) : queue_(std::make_shared<Queue>()) {
  queue_->gate = std::move(gate);
}

TaskThread::~TaskThread() {
  bool idle = false;
  {
    std::lock_guard<std::mutex> lock(queue_->mutex);
    queue_->stopping = true;
    idle = queue_->tasks.empty() && !queue_->running;
  }
  queue_->wake.notify_all();
  // Not idle includes being dropped from one of its own tasks, which it cannot join: it ends once its
  // tasks are done, and a later reap (or shutDown) joins it.
  if (!idle || queue_->thread.get_id() == std::this_thread::get_id()) return;
  if (queue_->thread.joinable()) queue_->thread.join();
  Registry& live = registry();
  std::lock_guard<std::mutex> lock(live.mutex);
  live.queues.erase(std::remove(live.queues.begin(), live.queues.end(), queue_), live.queues.end());
}

void TaskThread::post(std::function<void()> task, std::function<void()> stop) {
  push({std::move(task), false, std::move(stop)});
}

void TaskThread::postBetweenSteps(std::function<void()> task) { push({std::move(task), true, {}}); }

void TaskThread::push(Task task) {
  bool started = false;
  {
    std::lock_guard<std::mutex> lock(queue_->mutex);
    if (queue_->abandoned) return;  // shut down: the environment is going
    if (task.betweenSteps) ++queue_->betweenSteps;
    queue_->tasks.push_back(std::move(task));
    if (!queue_->thread.joinable()) {
      queue_->thread = std::thread([queue = queue_] { runTasks(queue); });
      started = true;
    }
  }
  if (started) {
    reapFinished();
    Registry& live = registry();
    std::lock_guard<std::mutex> lock(live.mutex);
    live.queues.push_back(queue_);
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
  queue.holdsKernelThreads = kernelThreadsOfThisThread() > 1;
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
  while (!ok_ && !queue.abandoned) {
    queue.parked = false;
    // Another thread's task (which the hook may await) runs its kernels without this one's beside them.
    if (runFrontBetweenSteps(queue, lock) || releaseAskedKernelThreads(queue, lock)) continue;
    queue.parked = true;
    queue.wake.notify_all();  // for runWhileParked
    queue.wake.wait(lock, [&] {
      return ok_ || queue.abandoned || queue.releaseKernelThreads ||
             (!queue.tasks.empty() && queue.tasks.front().betweenSteps);
    });
  }
  queue.hookWaiting = queue.parked = false;
  queue.holdsKernelThreads = kernelThreadsOfThisThread() > 1;  // the task goes on
  queue.wake.notify_all();
  return ok_.value_or(false);
}

bool TaskThread::runWhileParked(const std::function<void()>& work) {
  std::unique_lock<std::mutex> lock(queue_->mutex);
  // A hook that awaited a between-steps task may be here before that task has returned.
  queue_->wake.wait(lock, [&] { return !queue_->hookWaiting || queue_->parked || queue_->abandoned; });
  if (!queue_->parked || queue_->abandoned) return false;
  work();
  return true;
}

void TaskThread::runTasks(const std::shared_ptr<Queue>& queue) {
#ifdef __linux__
  // Named for top -H and /proc; the kernel threads it starts take the name too.
  pthread_setname_np(pthread_self(), "firebrand");
#endif
  std::unique_lock<std::mutex> lock(queue->mutex);
  while (awaitTask(*queue, lock)) {
    Task task = std::move(queue->tasks.front());
    queue->tasks.pop_front();
    if (task.betweenSteps) --queue->betweenSteps;
    const bool held = queue->holdsKernelThreads;
    queue->running = queue->holdsKernelThreads = true;  // until it ends, and then if it ran on several
    queue->stopRunning = std::move(task.stop);
    lock.unlock();
    askOthersToReleaseKernelThreads(*queue);
    task.run();
    lock.lock();
    queue->running = false;
    // Kept while idle, and ended only when another thread's task starts: a model called less often than its
    // pool outlived an idle spell started it again at each call (docs/performance.md).
    queue->holdsKernelThreads = held || kernelThreadsOfThisThread() > 1;
    queue->stopRunning = nullptr;
  }
  queue->finished = true;
  queue->wake.notify_all();
}

bool TaskThread::awaitTask(Queue& queue, std::unique_lock<std::mutex>& lock) {
  const auto ready = [&] { return queue.stopping || !queue.tasks.empty(); };
  const auto wakes = [&] { return ready() || queue.releaseKernelThreads; };
  while (!ready()) {
    if (releaseAskedKernelThreads(queue, lock)) continue;
    queue.wake.wait(lock, wakes);
  }
  return !queue.tasks.empty();  // else stopping, and nothing left to run
}

bool TaskThread::releaseAskedKernelThreads(Queue& queue, std::unique_lock<std::mutex>& lock) {
  if (!queue.releaseKernelThreads) return false;
  queue.releaseKernelThreads = false;
  if (queue.holdsKernelThreads) ++handOffs;
  endKernelThreads(queue, lock);
  return true;
}

void TaskThread::endKernelThreads(Queue& queue, std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  releaseKernelThreadsOfThisThread();
  lock.lock();
  queue.holdsKernelThreads = false;
}

void TaskThread::askOthersToReleaseKernelThreads(const Queue& queue) {
  Registry& live = registry();
  std::lock_guard<std::mutex> liveLock(live.mutex);
  for (const auto& other : live.queues) {
    if (other.get() == &queue) continue;
    std::lock_guard<std::mutex> lock(other->mutex);
    if (!other->holdsKernelThreads || other->releaseKernelThreads) continue;
    other->releaseKernelThreads = true;
    other->wake.notify_all();
  }
}

void TaskThread::reapFinished() {
  std::vector<std::shared_ptr<Queue>> finished;
  {
    Registry& live = registry();
    std::lock_guard<std::mutex> lock(live.mutex);
    const auto done = [](const std::shared_ptr<Queue>& queue) {
      std::lock_guard<std::mutex> queueLock(queue->mutex);
      return queue->finished && queue->thread.get_id() != std::this_thread::get_id();
    };
    std::vector<std::shared_ptr<Queue>> running;
    for (const auto& queue : live.queues) (done(queue) ? finished : running).push_back(queue);
    live.queues.swap(running);
  }
  for (const auto& queue : finished) {
    if (queue->thread.joinable()) queue->thread.join();
  }
}

void TaskThread::stopAndJoin(Queue& queue, std::chrono::seconds patience) {
  std::function<void()> stop;
  {
    std::lock_guard<std::mutex> lock(queue.mutex);
    queue.stopping = queue.abandoned = true;
    queue.tasks.clear();  // never started: nobody is left to settle them
    queue.betweenSteps = 0;
    stop = queue.stopRunning;
  }
  queue.wake.notify_all();
  if (stop) stop();
  if (queue.thread.get_id() == std::this_thread::get_id()) return;
  std::unique_lock<std::mutex> lock(queue.mutex);
  const bool ended = queue.wake.wait_for(lock, patience, [&] { return queue.finished || !queue.thread.joinable(); });
  lock.unlock();
  if (ended) {
    if (queue.thread.joinable()) queue.thread.join();
  } else {
    std::fprintf(stderr, "firebrand: a trainer's task did not stop within %lld s of Node's exit; leaving it\n",
                 static_cast<long long>(patience.count()));
    queue.thread.detach();
  }
}

void TaskThread::shutDown(const NapiGate* gate, std::chrono::seconds patience) {
  std::vector<std::shared_ptr<Queue>> targets;
  {
    Registry& live = registry();
    std::lock_guard<std::mutex> lock(live.mutex);
    const auto matches = [&](const std::shared_ptr<Queue>& queue) { return !gate || queue->gate.get() == gate; };
    std::copy_if(live.queues.begin(), live.queues.end(), std::back_inserter(targets), matches);
    live.queues.erase(std::remove_if(live.queues.begin(), live.queues.end(), matches), live.queues.end());
  }
  for (const auto& queue : targets) stopAndJoin(*queue, patience);
}

}  // namespace firebrand::binding
