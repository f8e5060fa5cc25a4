// RealClock, and the parts of Wakeup and Clock shared by every clock.
//
// Waits go through std::condition_variable::wait_until with a steady_clock
// deadline. With glibc (2.30 and later) libstdc++ implements that with
// pthread_cond_clockwait(CLOCK_MONOTONIC), so a step of the system clock
// neither shortens nor lengthens a wait. absl::Mutex timed waits are not used
// on purpose: in abseil 20220623 they convert the timeout to a CLOCK_REALTIME
// deadline.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <type_traits>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "chime/clock.h"

namespace chime {
namespace {

using SteadyClock = std::chrono::steady_clock;
static_assert(std::is_same_v<SteadyClock::duration, std::chrono::nanoseconds>,
              "MonoTime conversions assume steady_clock counts nanoseconds");

// steady_clock counts int64 nanoseconds since boot, so it cannot name an
// instant about 292 years after boot or later. A deadline there can never be
// reached; waiting for it is waiting forever.
constexpr absl::Duration kUnreachable =
    absl::FromChrono(SteadyClock::duration::max());

}  // namespace

void Wakeup::Notify() {
  // Notifying with mu_ held lets a waiter destroy this Wakeup as soon as its
  // wait returns: it cannot return before we unlock, and we touch nothing after
  // that.
  std::lock_guard<std::mutex> lock(mu_);
  notified_ = true;
  cv_.notify_all();
}

void Clock::SleepUntil(MonoTime deadline) {
  // Nobody else can reach `never_notified`, so WaitUntil returns only at the
  // deadline.
  Wakeup never_notified;
  WaitUntil(deadline, never_notified);
}

RealClock& RealClock::Get() {
  static RealClock* const clock = new RealClock();
  return *clock;
}

absl::Time RealClock::Now() const { return absl::Now(); }

MonoTime RealClock::MonoNow() const {
  return MonoTime::FromSinceOrigin(
      absl::FromChrono(SteadyClock::now().time_since_epoch()));
}

bool RealClock::WaitUntil(MonoTime deadline, Wakeup& wake) {
  std::unique_lock<std::mutex> lock(wake.mu_);
  const auto notified = [&wake] { return wake.notified_; };
  // Round up: MonoNow() has nanosecond resolution, absl::Duration a finer one,
  // and returning false promises MonoNow() >= deadline.
  const absl::Duration since_origin =
      absl::Ceil(deadline.SinceOrigin(), absl::Nanoseconds(1));
  if (since_origin >= kUnreachable) {  // Includes MonoTime::Infinite().
    wake.cv_.wait(lock, notified);
  } else {
    // steady_clock starts at boot, so a negative deadline has passed; clamping
    // it to zero keeps the timespec that libstdc++ builds valid.
    const SteadyClock::time_point until(absl::ToChronoNanoseconds(
        std::max(since_origin, absl::ZeroDuration())));
    // wait_until re-checks `notified` after the deadline, so a notification
    // racing with the timeout still wins; and it reports a timeout only once
    // steady_clock has reached `until`.
    if (!wake.cv_.wait_until(lock, until, notified)) return false;
  }
  wake.notified_ = false;
  return true;
}

}  // namespace chime
