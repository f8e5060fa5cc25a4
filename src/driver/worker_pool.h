// WorkerPool: a fixed set of threads running submitted tasks in submission
// order.
//
// The scheduler driver runs job attempts here. The Plan never starts more
// attempts than `max_concurrent_runs`, which defaults to the number of workers,
// so a task normally starts at once; tasks beyond the number of threads wait in
// the queue, first in first out.
//
// Workers wait for tasks on a mutex, never on a Clock: a SimulatedClock's
// BlockUntilWaiters counts only the scheduler thread.
//
// Thread-safety: Submit may be called from any thread, including a worker. Join
// must be called once, from a thread that is not a worker.
#ifndef CHIME_SRC_DRIVER_WORKER_POOL_H_
#define CHIME_SRC_DRIVER_WORKER_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace chime::driver {

class WorkerPool {
 public:
  // Starts `threads` workers. REQUIRES: threads >= 1.
  explicit WorkerPool(int threads);
  // Joins the workers if Join has not been called.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`. Returns false, and drops the task, once Join has begun.
  bool Submit(std::function<void()> task);
  // Queues `run(0) .. run(n - 1)` as one item: every worker takes the next
  // index until none is left, so n short tasks cost one queue operation, and a
  // long one holds up only the worker running it. Returns false, and drops
  // them, once Join has begun.
  //
  // `run` (and what it holds: a batch of 100,000 attempts took 6-13 ms to
  // free) is destroyed off the pool's lock and never before a later batch
  // can start: by the next WaitLastBatchTaken after the next SubmitBatch,
  // or else by the SubmitBatch after that, on the calling thread.
  bool SubmitBatch(size_t n, std::function<void(size_t)> run);
  // Waits, at most `max` (real time), until every index of the last batch
  // submitted has been taken by a worker. True if they have. For a submitter
  // that would otherwise compete with the workers for the CPU at the moment
  // they start a large batch. Then frees the batches before the last.
  bool WaitLastBatchTaken(absl::Duration max);

  // Lets the workers finish every queued task, then joins them. Returns when
  // all have exited.
  void Join();

  // True on one of this pool's worker threads.
  bool OnWorkerThread() const;
  // On a worker thread of any pool: its index in its pool, 0 .. threads - 1;
  // -1 elsewhere.
  static int WorkerIndex();

 private:
  void Work(int index);
  bool HasWorkOrJoining() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  struct Batch {
    size_t n = 0;
    std::atomic<size_t> next{0};
    std::function<void(size_t)> run;
    // Set by the worker that takes the last index.
    std::mutex taken_mu;
    std::condition_variable taken_cv;
    bool taken = false;
  };
  // A single task, or a batch (task empty).
  struct Item {
    std::function<void()> task;
    std::shared_ptr<Batch> batch;
  };

  mutable absl::Mutex mu_;
  std::deque<Item> tasks_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<Batch> last_batch_ ABSL_GUARDED_BY(mu_);
  // The batch submitted before last_batch_, kept for WaitLastBatchTaken to
  // free (see SubmitBatch).
  std::shared_ptr<Batch> retired_ ABSL_GUARDED_BY(mu_);
  bool joining_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread>
      threads_;  // written only by the constructor and Join
  std::vector<std::thread::id> ids_ ABSL_GUARDED_BY(mu_);
};

}  // namespace chime::driver

#endif  // CHIME_SRC_DRIVER_WORKER_POOL_H_
