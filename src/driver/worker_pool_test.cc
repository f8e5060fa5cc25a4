#include "src/driver/worker_pool.h"

#include <atomic>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace chime::driver {
namespace {

TEST(WorkerPool, RunsTasksConcurrentlyOnItsThreads) {
  WorkerPool pool(2);
  // Each task waits for the other: this finishes only if both run at once.
  absl::Notification a, b;
  std::atomic<bool> a_saw_b{false}, b_saw_a{false};
  ASSERT_TRUE(pool.Submit([&] {
    a.Notify();
    a_saw_b = b.WaitForNotificationWithTimeout(absl::Seconds(10));
  }));
  ASSERT_TRUE(pool.Submit([&] {
    b.Notify();
    b_saw_a = a.WaitForNotificationWithTimeout(absl::Seconds(10));
  }));
  pool.Join();
  EXPECT_TRUE(a_saw_b);
  EXPECT_TRUE(b_saw_a);
}

TEST(WorkerPool, BatchRunsEveryIndexOnce) {
  WorkerPool pool(2);
  constexpr size_t kN = 10000;
  std::vector<std::atomic<int>> runs(kN);
  ASSERT_TRUE(pool.SubmitBatch(kN, [&](size_t i) { ++runs[i]; }));
  pool.Join();
  for (size_t i = 0; i < kN; ++i) ASSERT_EQ(runs[i].load(), 1) << i;
}

TEST(WorkerPool, ALongTaskOfABatchHoldsUpOnlyItsOwnWorker) {
  WorkerPool pool(2);
  // Index 0 waits for index 2: only possible if the other worker takes 1 and
  // then 2 while the first is busy.
  absl::Notification last_ran;
  std::atomic<bool> waited{false};
  ASSERT_TRUE(pool.SubmitBatch(3, [&](size_t i) {
    if (i == 0)
      waited = last_ran.WaitForNotificationWithTimeout(absl::Seconds(10));
    if (i == 2) last_ran.Notify();
  }));
  pool.Join();
  EXPECT_TRUE(waited);
}

TEST(WorkerPool, BatchesOfEverySizeRunEveryIndexOnce) {
  // Sizes around the chunk boundaries (n / (4 * workers), at most 256).
  for (int workers : {1, 3}) {
    WorkerPool pool(workers);
    for (size_t n : {size_t{1}, size_t{11}, size_t{12}, size_t{13},
                     size_t{1023}, size_t{3072}, size_t{3073}, size_t{50001}}) {
      std::vector<std::atomic<int>> runs(n);
      ASSERT_TRUE(pool.SubmitBatch(n, [&](size_t i) { ++runs[i]; }));
      ASSERT_TRUE(pool.WaitLastBatchTaken(absl::Seconds(30)));
      // Taken is not done: wait for the last ones to run.
      for (int spins = 0; spins < 30000; ++spins) {
        size_t done = 0;
        for (size_t i = 0; i < n; ++i) done += runs[i].load();
        if (done >= n) break;
        absl::SleepFor(absl::Milliseconds(1));
      }
      for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(runs[i].load(), 1)
            << "workers " << workers << " n " << n << " index " << i;
    }
    pool.Join();
  }
}

TEST(WorkerPool, ALongTaskHoldsUpNoneOfTheRestOfItsChunk) {
  WorkerPool pool(2);
  // Index 0 waits until every other index has run: the rest of its chunk
  // (1 .. 255 of 10,000) must be taken by the other worker.
  constexpr size_t kN = 10000;
  std::atomic<size_t> others{0};
  std::atomic<bool> waited{false};
  absl::Notification all_others;
  ASSERT_TRUE(pool.SubmitBatch(kN, [&](size_t i) {
    if (i == 0) {
      waited = all_others.WaitForNotificationWithTimeout(absl::Seconds(10));
      return;
    }
    if (++others == kN - 1) all_others.Notify();
  }));
  pool.Join();
  EXPECT_TRUE(waited);
  EXPECT_EQ(others.load(), kN - 1);
}

TEST(WorkerPool, WaitLastBatchTakenReturnsOnceEveryIndexIsTaken) {
  WorkerPool pool(2);
  absl::Notification release;
  // Both workers block in indices 0 and 1; index 2 cannot be taken yet.
  ASSERT_TRUE(pool.SubmitBatch(3, [&](size_t i) {
    if (i < 2) release.WaitForNotificationWithTimeout(absl::Seconds(10));
  }));
  EXPECT_FALSE(pool.WaitLastBatchTaken(absl::Milliseconds(50)));
  release.Notify();
  EXPECT_TRUE(pool.WaitLastBatchTaken(absl::Seconds(10)));
  pool.Join();
}

// What a batch's function holds (a second's attempts) is freed once a later
// batch has started, never while it waits: before, the next SubmitBatch
// freed it under the pool's lock, ahead of queueing its own.
TEST(WorkerPool, ABatchIsFreedOnlyOnceTheNextOneHasStarted) {
  WorkerPool pool(2);
  std::atomic<bool> second_started{false};
  std::atomic<int> freed{0};  // 1: freed after the second started; 2: before
  struct Probe {
    Probe(std::atomic<bool>* started, std::atomic<int>* freed)
        : started(started), freed(freed) {}
    ~Probe() { freed->store(started->load() ? 1 : 2); }
    std::atomic<bool>* started;
    std::atomic<int>* freed;
  };
  auto probe = std::make_shared<Probe>(&second_started, &freed);
  absl::Notification first_done;
  ASSERT_TRUE(pool.SubmitBatch(
      1, [probe, &first_done](size_t) { first_done.Notify(); }));
  probe.reset();  // the batch holds the last reference
  ASSERT_TRUE(first_done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(pool.WaitLastBatchTaken(absl::Seconds(10)));
  ASSERT_TRUE(pool.SubmitBatch(2, [&](size_t) { second_started = true; }));
  EXPECT_EQ(freed.load(), 0);  // not by the SubmitBatch
  ASSERT_TRUE(pool.WaitLastBatchTaken(absl::Seconds(10)));
  EXPECT_EQ(freed.load(), 1);
  pool.Join();
}

TEST(WorkerPool, WorkersKnowTheirIndex) {
  WorkerPool pool(2);
  std::atomic<int> seen_bad{0};
  ASSERT_TRUE(pool.SubmitBatch(1000, [&](size_t) {
    const int i = WorkerPool::WorkerIndex();
    if (i != 0 && i != 1) ++seen_bad;
  }));
  pool.Join();
  EXPECT_EQ(seen_bad.load(), 0);
  EXPECT_EQ(WorkerPool::WorkerIndex(), -1);
}

TEST(WorkerPool, JoinFinishesQueuedTasksThenRefusesNewOnes) {
  WorkerPool pool(1);
  std::atomic<int> done{0};
  bool on_worker = false;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(pool.Submit([&] {
      on_worker = pool.OnWorkerThread();
      ++done;
    }));
  }
  pool.Join();
  EXPECT_EQ(done, 10);
  EXPECT_TRUE(on_worker);
  EXPECT_FALSE(pool.OnWorkerThread());
  EXPECT_FALSE(pool.Submit([] {}));
}

}  // namespace
}  // namespace chime::driver
