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
  // Queues `run(0) .. run(n - 1)` as one item, so n short tasks cost one
  // queue operation. Every worker takes a chunk of consecutive indices at a
  // time (up to kMaxChunk, and at most a quarter of each worker's share) and
  // runs them in order; once no chunk is left it takes single indices from
  // the rest of the others' chunks. A long task thus holds up only the worker
  // running it, and the workers, each in a stretch of its own, do not share
  // cache lines (chime-bench cron 100k: p99 22 -> 7.4 ms against one index
  // at a time; bench/RESULTS.md). Returns false, and drops them, once Join
  // has begun. REQUIRES: n < 2^31.
  //
  // `run` (and what it holds: a batch of 100,000 attempts took 6-13 ms to
  // free) is destroyed off the pool's lock and never before a later batch
  // can start: by the next WaitLastBatchTaken after the next SubmitBatch,
  // or else by the SubmitBatch after that, on the calling thread.
  bool SubmitBatch(size_t n, std::function<void(size_t)> run);
  // Waits, at most `max` (real time), until every index of the last batch
  // submitted has been taken by a worker (its last chunk is). True if they
  // have. For a submitter
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

  static constexpr size_t kMaxChunk = 256;
  // The chunk a worker runs: (end << 32) | next, in one word, so that its
  // owner and a worker taking from it agree on both.
  struct alignas(64) Chunk {
    std::atomic<uint64_t> range{0};
  };
  struct Batch {
    size_t n = 0;
    size_t chunk = 1;                 // indices a worker takes at a time
    std::atomic<size_t> next{0};      // the first index no chunk holds
    std::unique_ptr<Chunk[]> chunks;  // one per worker
    std::function<void(size_t)> run;
    // Set by the worker that takes the last chunk.
    std::mutex taken_mu;
    std::condition_variable taken_cv;
    bool taken = false;
  };
  // Runs the indices of `chunk` until none is left.
  static void RunChunk(Batch& batch, Chunk& chunk);

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
  const size_t size_;  // the number of workers
  std::vector<std::thread>
      threads_;  // written only by the constructor and Join
  std::vector<std::thread::id> ids_ ABSL_GUARDED_BY(mu_);
};

}  // namespace chime::driver

#endif  // CHIME_SRC_DRIVER_WORKER_POOL_H_
