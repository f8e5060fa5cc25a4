#include "src/base/concurrency_gate.h"

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace chime {
namespace {

TEST(ConcurrencyGateTest, NoMoreThanTheLimitAreInsideAtOnce) {
  ConcurrencyGate gate(2);
  std::atomic<int> inside{0}, most{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int k = 0; k < 50; ++k) {
        ConcurrencyGate::Pass pass = gate.Enter();
        const int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        absl::SleepFor(absl::Microseconds(50));
        --inside;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(most.load(), 2);
}

// Callers that wait enter in the order they arrived.
TEST(ConcurrencyGateTest, WaitersEnterInArrivalOrder) {
  ConcurrencyGate gate(1);
  std::optional<ConcurrencyGate::Pass> first(gate.Enter());
  absl::Mutex mu;
  std::vector<int> order;
  std::vector<std::thread> threads;
  for (int i = 0; i < 5; ++i) {
    threads.emplace_back([&, i] {
      ConcurrencyGate::Pass pass = gate.Enter();
      absl::MutexLock lock(&mu);
      order.push_back(i);
    });
    // Its ticket is taken before the next thread starts (bounded: 10 s).
    for (int spin = 0; spin < 10000 && gate.waiting() < i + 1; ++spin)
      absl::SleepFor(absl::Milliseconds(1));
    ASSERT_EQ(gate.waiting(), i + 1);
  }
  first.reset();  // lets them in, one at a time
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

}  // namespace
}  // namespace chime
