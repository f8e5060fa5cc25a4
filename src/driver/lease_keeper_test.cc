// LeaseKeeper on a real clock: it keeps a short lease alive, and when it can
// no longer renew it -- the store failing, or another holder having it -- it
// says so once and Valid() turns false no later than the lease could expire.
#include "src/driver/lease_keeper.h"

#include <atomic>
#include <memory>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "src/store/memory_store.h"
#include "testing/fault_injection_store.h"
#include "testing/offset_clock.h"

namespace chime::driver {
namespace {

constexpr absl::Duration kTtl = absl::Milliseconds(600);

class LeaseKeeperTest : public ::testing::Test {
 protected:
  LeaseKeeperTest()
      : base_(store::MemoryStore::Options{&RealClock::Get(), 1024}),
        store_(base_) {}

  Fence Acquire(const std::string& holder) {
    absl::StatusOr<LeaseGrant> g = store_.AcquireLease(
        "scheduler", holder, kTtl, clock_.MonoNow() + absl::Seconds(5));
    EXPECT_TRUE(g.ok()) << g.status();
    return Fence{"scheduler", g.ok() ? g->token : 0};
  }

  RealClock& clock_ = RealClock::Get();
  store::MemoryStore base_;
  testing::FaultInjectionStore store_;
  std::atomic<int> lost_{0};
  absl::Notification lost_once_;
};

TEST_F(LeaseKeeperTest, KeepsAShortLeaseAliveForManyTtls) {
  const MonoTime granted = clock_.MonoNow();
  LeaseKeeper keeper(store_, clock_, Acquire("a"), kTtl, granted,
                     [&](const absl::Status&) { ++lost_; });
  keeper.Start();
  absl::SleepFor(4 * kTtl);
  EXPECT_TRUE(keeper.Valid(clock_.MonoNow()));
  EXPECT_GT(keeper.valid_until(), granted + 3 * kTtl);
  // Nobody else can take it meanwhile.
  EXPECT_TRUE(absl::IsAlreadyExists(
      store_
          .AcquireLease("scheduler", "b", kTtl,
                        clock_.MonoNow() + absl::Seconds(5))
          .status()));
  keeper.Stop();
  EXPECT_EQ(lost_.load(), 0);
}

TEST_F(LeaseKeeperTest, GivesUpBeforeTheLeaseCouldExpireWhenRenewalsFail) {
  const MonoTime granted = clock_.MonoNow();
  LeaseKeeper keeper(store_, clock_, Acquire("a"), kTtl, granted,
                     [&](const absl::Status&) {
                       if (++lost_ == 1) lost_once_.Notify();
                     });
  store_.FailNextWrites(1000);  // the store is unreachable from now on
  keeper.Start();
  ASSERT_TRUE(lost_once_.WaitForNotificationWithTimeout(absl::Seconds(10)));
  const MonoTime noticed = clock_.MonoNow();
  // Its own deadline (ttl minus a fifth, from the grant) had passed, and
  // starting anything stopped then: before the lease could expire.
  EXPECT_FALSE(keeper.Valid(noticed));
  EXPECT_LE(keeper.valid_until(), granted + kTtl);
  EXPECT_LT(noticed - granted, kTtl + kTtl / 3 + absl::Seconds(1));
  keeper.Stop();
  EXPECT_EQ(lost_.load(), 1);
}

// A renewal that hangs past its deadline -- libpq's cancel request held by a
// network that drops packets, as the chaos test's cut_drop found -- does not
// hold the loss back: it is reported at the deadline, by the clock alone.
TEST_F(LeaseKeeperTest, GivesUpOnTimeWhileARenewalHangs) {
  const MonoTime granted = clock_.MonoNow();
  LeaseKeeper keeper(store_, clock_, Acquire("a"), kTtl, granted,
                     [&](const absl::Status&) {
                       if (++lost_ == 1) lost_once_.Notify();
                     });
  store_.SetDelay(absl::Seconds(5), &clock_);  // every call, past its deadline
  keeper.Start();
  ASSERT_TRUE(lost_once_.WaitForNotificationWithTimeout(absl::Seconds(10)));
  const MonoTime noticed = clock_.MonoNow();
  EXPECT_FALSE(keeper.Valid(noticed));
  EXPECT_LT(noticed - granted, kTtl + absl::Seconds(1))
      << "waited for the hung renewal";
  keeper.Stop();  // waits for the renewal to come back, which changes nothing
  EXPECT_FALSE(keeper.Valid(clock_.MonoNow()));
  EXPECT_EQ(lost_.load(), 1);
}

TEST_F(LeaseKeeperTest, StopsAtOnceWhenAnotherHolderHasTheLease) {
  const Fence stale = Acquire("a");
  absl::SleepFor(kTtl + absl::Milliseconds(50));  // expired, not renewed
  Acquire("b");
  LeaseKeeper keeper(store_, clock_, stale, kTtl, clock_.MonoNow(),
                     [&](const absl::Status&) {
                       if (++lost_ == 1) lost_once_.Notify();
                     });
  keeper.Start();
  // The first renewal (after a third of the ttl) is refused as fenced.
  ASSERT_TRUE(lost_once_.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(keeper.Valid(clock_.MonoNow()));
  keeper.Stop();
}

TEST(LeaseKeeperSkewTest, MeasuresTheStoresClockAndReportsSkewOnce) {
  RealClock& clock = RealClock::Get();
  testing::OffsetClock store_clock;  // another machine's clock
  store::MemoryStore store(store::MemoryStore::Options{&store_clock, 1024});
  absl::StatusOr<LeaseGrant> g = store.AcquireLease(
      "scheduler", "a", kTtl, clock.MonoNow() + absl::Seconds(5));
  ASSERT_TRUE(g.ok()) << g.status();
  std::atomic<int> reported{0};
  absl::Notification skewed;
  absl::Duration seen;
  LeaseKeeper keeper(
      store, clock, Fence{"scheduler", g->token}, kTtl, clock.MonoNow(),
      [](const absl::Status&) {},
      SkewCheck{.max = absl::Seconds(1),
                .on_exceeded = [&](const ClockOffset& o) {
                  seen = o.offset;
                  if (++reported == 1) skewed.Notify();
                }});
  EXPECT_FALSE(keeper.clock_offset().has_value());  // none given at grant
  keeper.Start();
  absl::SleepFor(kTtl);  // a renewal or two, with the clocks agreeing
  ASSERT_TRUE(keeper.clock_offset().has_value());
  EXPECT_LT(absl::AbsDuration(keeper.clock_offset()->offset),
            absl::Milliseconds(100));
  EXPECT_EQ(reported.load(), 0);

  // The store's clock is now 30 s ahead: this node's is behind.
  store_clock.Set(absl::Seconds(30));
  ASSERT_TRUE(skewed.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_LT(absl::AbsDuration(seen - absl::Seconds(30)),
            absl::Milliseconds(100));
  absl::SleepFor(kTtl);  // more renewals: reported once, still renewing
  EXPECT_EQ(reported.load(), 1);
  EXPECT_TRUE(keeper.Valid(clock.MonoNow()));
  EXPECT_GT(keeper.clock_offset()->offset, absl::Seconds(29));
  keeper.Stop();
}

}  // namespace
}  // namespace chime::driver
