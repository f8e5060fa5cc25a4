// Clocks: the one door through which chime reads time and waits for it.
//
// chime keeps two times apart:
//   - wall time (`absl::Time`): what schedules are written in; it can be
//   stepped by NTP or an
//     operator, forwards or backwards;
//   - monotonic time (`MonoTime`): what timers, timeouts and lease deadlines
//   run on; it never
//     jumps, and it means nothing across processes or machines.
//
// Every component that needs the time or needs to wait takes a `Clock&`.
// Production wires a `RealClock` (in `main()` only); tests wire a
// `SimulatedClock` (testing/simulated_clock.h), which moves only when the test
// says so and whose wall time can be stepped independently of its monotonic
// time.
//
// Thread-safety: every method of every Clock is safe to call from any thread.
#ifndef CHIME_INCLUDE_CHIME_CLOCK_H_
#define CHIME_INCLUDE_CHIME_CLOCK_H_

#include <compare>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "absl/time/time.h"

namespace chime {

// A point on a monotonic clock: a duration since that clock's arbitrary origin.
// Only differences and comparisons between MonoTimes of the same clock are
// meaningful.
class MonoTime {
 public:
  constexpr MonoTime() = default;
  static constexpr MonoTime FromSinceOrigin(absl::Duration d) {
    return MonoTime(d);
  }
  static constexpr MonoTime Infinite() {
    return MonoTime(absl::InfiniteDuration());
  }

  constexpr absl::Duration SinceOrigin() const { return since_origin_; }

  friend MonoTime operator+(MonoTime t, absl::Duration d) {
    return MonoTime(t.since_origin_ + d);
  }
  friend MonoTime operator-(MonoTime t, absl::Duration d) {
    return MonoTime(t.since_origin_ - d);
  }
  friend absl::Duration operator-(MonoTime a, MonoTime b) {
    return a.since_origin_ - b.since_origin_;
  }
  MonoTime& operator+=(absl::Duration d) {
    since_origin_ += d;
    return *this;
  }
  friend constexpr bool operator==(MonoTime a, MonoTime b) {
    return a.since_origin_ == b.since_origin_;
  }
  friend constexpr std::strong_ordering operator<=>(MonoTime a, MonoTime b) {
    if (a.since_origin_ < b.since_origin_) return std::strong_ordering::less;
    if (b.since_origin_ < a.since_origin_) return std::strong_ordering::greater;
    return std::strong_ordering::equal;
  }

 private:
  constexpr explicit MonoTime(absl::Duration d) : since_origin_(d) {}
  absl::Duration since_origin_ = absl::ZeroDuration();
};

// A wake-up signal for one waiting thread. `Notify()` may be called from any
// thread, before or during a wait: a notification is remembered until a
// `Clock::WaitUntil` consumes it.
class Wakeup {
 public:
  Wakeup() = default;
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;

  // Makes the current (or, if none, the next) WaitUntil on this Wakeup return
  // true.
  void Notify();

 private:
  friend class RealClock;
  friend class SimulatedClockWaiterAccess;

  std::mutex mu_;
  std::condition_variable cv_;
  bool notified_ = false;  // guarded by mu_
  bool timed_out_ =
      false;  // guarded by mu_; set by a SimulatedClock reaching the deadline
};

class Clock {
 public:
  virtual ~Clock() = default;

  // Current wall time. May jump in either direction between calls.
  virtual absl::Time Now() const = 0;

  // Current monotonic time. Never decreases.
  virtual MonoTime MonoNow() const = 0;

  // Blocks the calling thread until `wake` is notified or MonoNow() >=
  // `deadline`, whichever comes first. Returns true if it returned because of a
  // notification (consuming it), false on reaching the deadline. A deadline
  // already passed returns at once (true if a notification was pending).
  // Wall-clock steps never lengthen or shorten the wait.
  virtual bool WaitUntil(MonoTime deadline, Wakeup& wake) = 0;

  // Blocks until MonoNow() >= deadline.
  void SleepUntil(MonoTime deadline);
  void SleepFor(absl::Duration d) { SleepUntil(MonoNow() + d); }
};

// The operating system's clocks: CLOCK_REALTIME for wall time, CLOCK_MONOTONIC
// for monotonic time. Waits use CLOCK_MONOTONIC, so stepping the system clock
// does not disturb them.
class RealClock final : public Clock {
 public:
  // The process-wide instance. Never destroyed.
  static RealClock& Get();

  absl::Time Now() const override;
  MonoTime MonoNow() const override;
  bool WaitUntil(MonoTime deadline, Wakeup& wake) override;
};

}  // namespace chime

#endif  // CHIME_INCLUDE_CHIME_CLOCK_H_
