#include "src/driver/worker_pool.h"

#include <atomic>

#include "absl/synchronization/notification.h"
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
