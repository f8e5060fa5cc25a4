// Tests of RealClock. The real clock is the subject here, so these tests do
// wait in real time; every wait is a few tens of milliseconds, and the whole
// file takes well under a second.
#include <cstdint>
#include <limits>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "chime/clock.h"
#include "gtest/gtest.h"

namespace chime {
namespace {

// Long enough that a wait which should be cut short by a notification would
// visibly not be, yet never actually waited for when the code is right.
constexpr absl::Duration kLongDeadline = absl::Seconds(30);
// A generous bound for "at once": scheduling delays on a loaded machine stay
// far below it.
constexpr absl::Duration kPrompt = absl::Seconds(5);

// Notifies `wake` from another thread after a short real delay, so that the
// notification most likely arrives while the caller is already blocked (tested
// separately: before the wait).
std::thread NotifyLater(Wakeup& wake) {
  return std::thread([&wake] {
    RealClock::Get().SleepFor(absl::Milliseconds(20));
    wake.Notify();
  });
}

TEST(RealClock, GetAlwaysReturnsTheSameInstance) {
  EXPECT_EQ(&RealClock::Get(), &RealClock::Get());
}

TEST(RealClock, NowIsTheSystemWallTime) {
  const absl::Time before = absl::Now();
  const absl::Time now = RealClock::Get().Now();
  const absl::Time after = absl::Now();
  EXPECT_LE(before, now);
  EXPECT_LE(now, after);
}

TEST(RealClock, MonoNowNeverDecreases) {
  RealClock& clock = RealClock::Get();
  MonoTime previous = clock.MonoNow();
  for (int i = 0; i < 100000; ++i) {
    const MonoTime now = clock.MonoNow();
    ASSERT_GE(now, previous) << "at read " << i;
    previous = now;
  }
}

TEST(RealClock, MonoNowAdvancesWithRealTime) {
  RealClock& clock = RealClock::Get();
  const MonoTime start = clock.MonoNow();
  clock.SleepFor(absl::Milliseconds(5));
  EXPECT_GT(clock.MonoNow(), start);
}

TEST(RealClock, WaitUntilAPassedDeadlineReturnsFalseAtOnce) {
  RealClock& clock = RealClock::Get();
  Wakeup wake;
  const MonoTime start = clock.MonoNow();
  EXPECT_FALSE(clock.WaitUntil(start - absl::Seconds(1), wake));
  EXPECT_FALSE(clock.WaitUntil(start, wake));
  // Before the steady clock's origin, and infinitely far back: still just
  // "passed".
  EXPECT_FALSE(
      clock.WaitUntil(MonoTime::FromSinceOrigin(-absl::Hours(1)), wake));
  EXPECT_FALSE(clock.WaitUntil(MonoTime() - absl::InfiniteDuration(), wake));
  EXPECT_LT(clock.MonoNow() - start, kPrompt);
}

TEST(RealClock, WaitUntilReturnsFalseOnlyOnceTheDeadlineIsReached) {
  RealClock& clock = RealClock::Get();
  Wakeup wake;
  const MonoTime deadline = clock.MonoNow() + absl::Milliseconds(30);
  EXPECT_FALSE(clock.WaitUntil(deadline, wake));
  EXPECT_GE(clock.MonoNow(), deadline);
}

TEST(RealClock, WaitUntilReturnsTruePromptlyWhenNotifiedFromAnotherThread) {
  RealClock& clock = RealClock::Get();
  Wakeup wake;
  std::thread notifier = NotifyLater(wake);
  const MonoTime start = clock.MonoNow();
  EXPECT_TRUE(clock.WaitUntil(start + kLongDeadline, wake));
  EXPECT_LT(clock.MonoNow() - start, kPrompt);
  notifier.join();
}

TEST(RealClock, NotificationSentBeforeTheWaitIsNotLost) {
  RealClock& clock = RealClock::Get();
  Wakeup wake;
  wake.Notify();
  const MonoTime start = clock.MonoNow();
  EXPECT_TRUE(clock.WaitUntil(start + kLongDeadline, wake));
  EXPECT_LT(clock.MonoNow() - start, kPrompt);
}

TEST(RealClock, PendingNotificationWinsOverAPassedDeadline) {
  RealClock& clock = RealClock::Get();
  Wakeup wake;
  wake.Notify();
  EXPECT_TRUE(clock.WaitUntil(clock.MonoNow() - absl::Seconds(1), wake));
}

TEST(RealClock, WaitUntilConsumesTheNotification) {
  RealClock& clock = RealClock::Get();
  Wakeup wake;
  wake.Notify();
  wake.Notify();  // Notifications do not add up: one is pending, not two.
  EXPECT_TRUE(clock.WaitUntil(clock.MonoNow(), wake));
  EXPECT_FALSE(clock.WaitUntil(clock.MonoNow(), wake));
}

TEST(RealClock, InfiniteDeadlineWaitsForTheNotification) {
  RealClock& clock = RealClock::Get();
  Wakeup wake;
  std::thread notifier = NotifyLater(wake);
  EXPECT_TRUE(clock.WaitUntil(MonoTime::Infinite(), wake));
  notifier.join();
}

// A deadline beyond what steady_clock can represent must mean "far future", not
// wrap around into the past (which would return false at once instead of
// waiting for the notification).
TEST(RealClock, FarFutureDeadlinesDoNotOverflow) {
  RealClock& clock = RealClock::Get();
  const MonoTime far_deadlines[] = {
      clock.MonoNow() + absl::Hours(24 * 365 * 1000),  // A thousand years.
      MonoTime::FromSinceOrigin(
          absl::Seconds(std::numeric_limits<int64_t>::max())),
      MonoTime::FromSinceOrigin(
          absl::Nanoseconds(std::numeric_limits<int64_t>::max())),
      MonoTime::FromSinceOrigin(
          absl::Nanoseconds(std::numeric_limits<int64_t>::max() - 1)),
  };
  for (const MonoTime deadline : far_deadlines) {
    Wakeup wake;
    std::thread notifier = NotifyLater(wake);
    EXPECT_TRUE(clock.WaitUntil(deadline, wake))
        << absl::FormatDuration(deadline.SinceOrigin());
    notifier.join();
  }
}

TEST(RealClock, SleepForSleepsAtLeastTheRequestedDuration) {
  RealClock& clock = RealClock::Get();
  const MonoTime start = clock.MonoNow();
  clock.SleepFor(absl::Milliseconds(30));
  EXPECT_GE(clock.MonoNow() - start, absl::Milliseconds(30));
}

TEST(RealClock, SleepUntilReturnsAtOrAfterTheDeadline) {
  RealClock& clock = RealClock::Get();
  const MonoTime deadline = clock.MonoNow() + absl::Milliseconds(10);
  clock.SleepUntil(deadline);
  EXPECT_GE(clock.MonoNow(), deadline);
}

}  // namespace
}  // namespace chime
