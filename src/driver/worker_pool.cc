#include "src/driver/worker_pool.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "src/base/thread_name.h"

namespace chime::driver {

WorkerPool::WorkerPool(int threads) : size_(std::max(threads, 1)) {
  if (threads < 1) {
    std::fprintf(stderr,
                 "chime::driver::WorkerPool: %d threads; need at least 1\n",
                 threads);
    std::abort();
  }
  absl::MutexLock lock(&mu_);
  for (int i = 0; i < threads; ++i) {
    threads_.push_back(
        base::NamedThread("chime-worker", [this, i] { Work(i); }));
    ids_.push_back(threads_.back().get_id());
  }
}

WorkerPool::~WorkerPool() { Join(); }

bool WorkerPool::Submit(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  if (joining_) return false;
  tasks_.push_back(Item{std::move(task), nullptr});
  return true;
}

bool WorkerPool::SubmitBatch(size_t n, std::function<void(size_t)> run) {
  if (n >= (size_t{1} << 31)) {
    std::fprintf(stderr, "chime::driver::WorkerPool: a batch of %zu tasks\n",
                 n);
    std::abort();
  }
  auto batch = std::make_shared<Batch>();
  batch->n = n;
  batch->chunk = std::clamp<size_t>(n / (4 * size_), 1, kMaxChunk);
  batch->chunks = std::make_unique<Chunk[]>(size_);
  batch->run = std::move(run);
  // Normally null: WaitLastBatchTaken freed it. Freed after the lock, once
  // the new batch can be taken.
  std::shared_ptr<Batch> older;
  absl::MutexLock lock(&mu_);
  if (joining_) return false;
  if (n > 0) {
    older = std::exchange(retired_, std::move(last_batch_));
    last_batch_ = batch;
    tasks_.push_back(Item{nullptr, std::move(batch)});
  }
  return true;
}

bool WorkerPool::WaitLastBatchTaken(absl::Duration max) {
  std::shared_ptr<Batch> batch;
  std::shared_ptr<Batch> retired;
  {
    absl::MutexLock lock(&mu_);
    batch = last_batch_;
  }
  if (batch == nullptr) return true;
  bool taken;
  {
    std::unique_lock<std::mutex> lock(batch->taken_mu);
    taken = batch->taken_cv.wait_for(lock, absl::ToChronoNanoseconds(max),
                                     [&] { return batch->taken; });
  }
  {
    absl::MutexLock lock(&mu_);
    retired = std::move(retired_);
  }
  return taken;  // `retired` is freed here, on the caller's thread
}

void WorkerPool::Join() {
  {
    absl::MutexLock lock(&mu_);
    if (joining_) return;
    joining_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

bool WorkerPool::OnWorkerThread() const {
  absl::MutexLock lock(&mu_);
  return std::find(ids_.begin(), ids_.end(), std::this_thread::get_id()) !=
         ids_.end();
}

bool WorkerPool::HasWorkOrJoining() const {
  return joining_ || !tasks_.empty();
}

namespace {
thread_local int worker_index = -1;
}  // namespace

int WorkerPool::WorkerIndex() { return worker_index; }

void WorkerPool::Work(int index) {
  worker_index = index;
  while (true) {
    std::function<void()> task;
    std::shared_ptr<Batch> batch;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &WorkerPool::HasWorkOrJoining));
      if (tasks_.empty()) return;  // joining, and nothing left to do
      Item& front = tasks_.front();
      if (front.batch == nullptr) {
        task = std::move(front.task);
        tasks_.pop_front();
      } else if (front.batch->next.load() >= front.batch->n) {
        tasks_.pop_front();  // every index is taken
        continue;
      } else {
        batch = front.batch;
      }
    }
    if (batch == nullptr) {
      task();
      continue;
    }
    Chunk& mine = batch->chunks[index];
    for (size_t b = batch->next.fetch_add(batch->chunk); b < batch->n;
         b = batch->next.fetch_add(batch->chunk)) {
      const size_t e = std::min(batch->n, b + batch->chunk);
      if (e == batch->n) {
        std::lock_guard<std::mutex> lock(batch->taken_mu);
        batch->taken = true;
        batch->taken_cv.notify_all();
      }
      mine.range.store((uint64_t{e} << 32) | b);
      RunChunk(*batch, mine);
    }
    // What the others have yet to run of their chunks (one may be held up
    // by a long task). A chunk published after this look is run by its
    // owner.
    for (size_t k = 1; k < size_; ++k)
      RunChunk(*batch, batch->chunks[(index + k) % size_]);
  }
}

void WorkerPool::RunChunk(Batch& batch, Chunk& chunk) {
  constexpr uint64_t kLow = (uint64_t{1} << 32) - 1;
  // Each worker that finds the chunk empty moves `next` past `end` once
  // more: with n < 2^31, never into end's bits.
  for (uint64_t r = chunk.range.load(); (r & kLow) < (r >> 32);
       r = chunk.range.load()) {
    r = chunk.range.fetch_add(1);
    if ((r & kLow) >= (r >> 32)) return;
    batch.run(static_cast<size_t>(r & kLow));
  }
}

}  // namespace chime::driver
