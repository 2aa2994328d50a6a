// A long-lived thread that runs one trainer's (or inference model's) work, a
// task at a time. On libuv's pool each epoch ran on whichever pool thread was
// free: cold caches and libtorch thread-locals at every epoch (measured: tiny
// steps ~3% slower than on one thread) and a malloc arena per pool thread,
// each keeping an epoch's peak of activations.
//
// Short tasks may be posted as "between steps" (a prediction during a fit):
// a long task (an epoch) that calls the function stepBoundary() returns runs
// them at its step boundaries instead of making them wait for its end. While
// the running task waits for JavaScript (a per-batch hook, HookWait), it runs
// them too: the hook may be awaiting one, which must not wait for the hook.
//
// Each such thread's kernels run on its own OpenMP pool, and libgomp spins at a fork-join only while the
// process holds no more pool threads than cores. So when a task starts, the other task threads end their
// pools once idle (a trainer and a loaded Model taking turns would otherwise each sleep and wake at every
// fork-join). An idle thread alone keeps its pool: asleep, it costs no time, and the next call needs it.
//
// No such thread outlives its environment: when the environment goes, or the
// process exits, shutDown stops each (its running task asked to stop, its hook
// waits ended, its queue dropped) and joins it.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "binding/napi_gate.h"

namespace firebrand::binding {

class TaskThread {
  struct Queue;

 public:
  // `gate`: its environment's, which its tasks' calls into Node pass.
  explicit TaskThread(std::shared_ptr<NapiGate> gate);
  TaskThread(const TaskThread&) = delete;
  TaskThread& operator=(const TaskThread&) = delete;
  // Joins the thread when it is idle; else lets it finish its tasks alone
  // (a process exiting mid-epoch must not wait for the epoch): shutDown joins it then.
  ~TaskThread();

  // Queues `task` to run on this thread after those before it; it must not throw.
  // `stop` asks it to end early (shutDown calls it while it runs).
  void post(std::function<void()> task, std::function<void()> stop = {});
  // As post, and the running task may run it at its next step boundary.
  void postBetweenSteps(std::function<void()> task);
  // For the running task to call at its step boundaries: runs the between-steps
  // tasks at the front of the queue (in order; an atomic load when there are none).
  std::function<void()> stepBoundary() const;
  const std::shared_ptr<NapiGate>& gate() const { return queue_->gate; }

  // The running task's wait for the JS thread (a per-batch hook to settle).
  class HookWait {
   public:
    // Any thread; the first call decides what wait() returns.
    void finish(bool ok);
    // The running task: until finish(), runs the between-steps tasks posted meanwhile, in order.
    // False when the thread is shut down meanwhile.
    bool wait();

   private:
    friend class TaskThread;
    explicit HookWait(std::shared_ptr<Queue> queue) : queue_(std::move(queue)) {}
    std::shared_ptr<Queue> queue_;
    std::optional<bool> ok_;  // guarded by the queue's mutex
  };
  // Makes HookWaits, the running task parked from then until wait() returns (call it even when the
  // hand-off to JS fails); it may outlive this object, as the thread may.
  std::function<std::shared_ptr<HookWait>()> hookWaits() const;

  // Runs `work` now, on the calling thread, if the running task is parked in
  // a HookWait (once a between-steps task it runs returns): it cannot resume
  // until `work` returns. Returns whether it ran. For state the task reads at its next step.
  bool runWhileParked(const std::function<void()>& work);

  // Stops and joins every task thread of the environment whose gate is `gate` (every one when null),
  // waiting at most `patience` for each running task to stop; the gates must be closed first.
  static void shutDown(const NapiGate* gate, std::chrono::seconds patience);
  // How many times, in this process, a task thread ended its kernel threads because another's task started.
  static int64_t kernelThreadHandOffs();

 private:
  struct Task {
    std::function<void()> run;
    bool betweenSteps = false;
    std::function<void()> stop;
  };
  // Shared with the thread, which may outlive this object, and with the registry of live threads.
  struct Queue {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<Task> tasks;
    std::atomic<int> betweenSteps{0};  // between-steps tasks queued
    bool running = false;              // a task is running
    bool hookWaiting = false;          // the running task waits in a HookWait
    bool parked = false;               // ... and runs nothing meanwhile
    bool stopping = false;
    bool abandoned = false;             // shut down: hook waits end, false
    bool finished = false;              // the thread has returned from its loop
    bool holdsKernelThreads = false;    // a task ran on more than one kernel thread, not ended since
    bool releaseKernelThreads = false;  // another thread's task started: end them once idle or parked
    std::function<void()> stopRunning;  // the running task's stop, if any
    std::shared_ptr<NapiGate> gate;
    std::thread thread;  // started by the first task
  };

  void push(Task task);
  static void runTasks(const std::shared_ptr<Queue>& queue);
  // Waits for a task (true) or for stopping with none left (false), ending the kernel threads when another
  // thread asks (lock held on entry and return).
  static bool awaitTask(Queue& queue, std::unique_lock<std::mutex>& lock);
  // With the lock held, on the queue's thread: ends its kernel threads if another thread asked (true when asked).
  static bool releaseAskedKernelThreads(Queue& queue, std::unique_lock<std::mutex>& lock);
  static void endKernelThreads(Queue& queue, std::unique_lock<std::mutex>& lock);
  // Before a task runs on `queue`'s thread: every other thread holding kernel threads ends them once idle.
  static void askOthersToReleaseKernelThreads(const Queue& queue);
  static void runBetweenSteps(Queue& queue);
  // With the lock held: runs the between-steps task at the front, if any (unlocking meanwhile).
  static bool runFrontBetweenSteps(Queue& queue, std::unique_lock<std::mutex>& lock);
  static void stopAndJoin(Queue& queue, std::chrono::seconds patience);
  // Every thread started and not yet joined, by its queue; never destroyed (process exit reads it).
  struct Registry;
  static Registry& registry();
  // Joins the threads whose loops have returned, but not the calling one.
  static void reapFinished();

  std::shared_ptr<Queue> queue_;
};

}  // namespace firebrand::binding
