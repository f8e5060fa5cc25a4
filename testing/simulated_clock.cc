#include "testing/simulated_clock.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "chime/clock.h"

namespace chime {

// Reaches the private state of a Wakeup, which names this class as a friend.
class SimulatedClockWaiterAccess {
 public:
  static std::mutex& Mutex(Wakeup& w) { return w.mu_; }
  static std::condition_variable& CondVar(Wakeup& w) { return w.cv_; }
  static bool& Notified(Wakeup& w) { return w.notified_; }
  static bool& TimedOut(Wakeup& w) { return w.timed_out_; }
};

namespace {

using Access = SimulatedClockWaiterAccess;

// A broken test (or a broken clock): say what happened and stop, rather than
// hang or go on with a time line that no longer means anything.
[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "SimulatedClock: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

std::string Show(MonoTime t) {
  return absl::StrCat("origin+", absl::FormatDuration(t.SinceOrigin()));
}

}  // namespace

// Lock order: advance_mu_, then mu_, then a Wakeup's mutex. A thread holding a
// Wakeup's mutex takes no other lock. No one blocks while holding mu_ except on
// these locks: waits on mu_ go through Mutex::Await, which releases it. Only
// advance_mu_ is held while AdvanceTo waits for a woken thread, and that thread
// needs only mu_ to leave WaitUntil.
//
// The real-time limits of AdvanceTo and BlockUntilWaiters go through
// absl::Mutex::AwaitWithTimeout, which in this abseil version measures
// CLOCK_REALTIME. They are safety nets only, so a step of the host's clock that
// stretches or shortens one is harmless.

SimulatedClock::SimulatedClock(absl::Time wall_start) : wall_(wall_start) {}

SimulatedClock::~SimulatedClock() {
  absl::MutexLock lock(&mu_);
  if (!waiters_.empty()) {
    Die(absl::StrCat(
        "destroyed while ", waiters_.size(),
        " thread(s) are inside WaitUntil; join them first (the earliest ",
        "waits until ", Show(waiters_.begin()->first.first), ")"));
  }
}

absl::Time SimulatedClock::Now() const {
  absl::MutexLock lock(&mu_);
  return wall_;
}

MonoTime SimulatedClock::MonoNow() const {
  absl::MutexLock lock(&mu_);
  return mono_;
}

bool SimulatedClock::WaitUntil(MonoTime deadline, Wakeup& wake) {
  std::mutex& wake_mu = Access::Mutex(wake);
  WaiterKey key;
  {
    absl::MutexLock lock(&mu_);
    std::lock_guard<std::mutex> wake_lock(wake_mu);
    if (Access::Notified(wake)) {
      Access::Notified(wake) = false;
      return true;
    }
    if (deadline <= mono_) return false;
    key = {deadline, next_sequence_++};
    waiters_.emplace(key, &wake);
    // An earlier wait on this Wakeup may have left the flag set: AdvanceTo can
    // reach a deadline while that wait is on its way out because of a
    // notification.
    Access::TimedOut(wake) = false;
  }

  // From here until we erase `key`, AdvanceTo may set TimedOut; Notify may set
  // Notified. Both are state, not events, so one that happens before we block
  // is not lost.
  bool notified;
  {
    std::unique_lock<std::mutex> wake_lock(wake_mu);
    const auto woken = [&wake] {
      return Access::Notified(wake) || Access::TimedOut(wake);
    };
    if (!Access::CondVar(wake).wait_for(
            wake_lock, absl::ToChronoNanoseconds(kStuckWaiterLimit), woken)) {
      Die(absl::StrCat(
          "a thread has been inside WaitUntil(", Show(deadline), ") for ",
          absl::FormatDuration(kStuckWaiterLimit),
          " of real time, neither notified nor reached by AdvanceTo; the test ",
          "is probably stuck (missing AdvanceBy/AdvanceTo or Notify?)"));
    }
    // If both happened, the notification wins, as in RealClock.
    notified = Access::Notified(wake);
    Access::Notified(wake) = false;
  }

  absl::MutexLock lock(&mu_);
  waiters_.erase(key);
  return notified;
}

void SimulatedClock::AdvanceBy(absl::Duration d) {
  if (d < absl::ZeroDuration() || d == absl::InfiniteDuration()) {
    Die(absl::StrCat("AdvanceBy(", absl::FormatDuration(d),
                     "): the duration must be finite and not negative"));
  }
  absl::MutexLock advance_lock(&advance_mu_);
  MonoTime target;
  {
    absl::MutexLock lock(&mu_);
    target = mono_ + d;
  }
  AdvanceToHoldingAdvanceMu(target);
}

void SimulatedClock::AdvanceTo(MonoTime target) {
  absl::MutexLock advance_lock(&advance_mu_);
  AdvanceToHoldingAdvanceMu(target);
}

void SimulatedClock::AdvanceToHoldingAdvanceMu(MonoTime target) {
  absl::MutexLock lock(&mu_);
  if (target < mono_ || target == MonoTime::Infinite()) {
    Die(absl::StrCat("AdvanceTo(", Show(target),
                     ") with MonoNow() == ", Show(mono_),
                     ": monotonic time cannot go back or reach infinity"));
  }
  // mu_ is released only inside Await, and a thread can start waiting only with
  // a deadline after mono_; so a thread that goes back to sleep while we wait
  // for it to leave is still handled here if its new deadline is <= target.
  while (!waiters_.empty() && waiters_.begin()->first.first <= target) {
    const WaiterKey key = waiters_.begin()->first;
    Wakeup& wake = *waiters_.begin()->second;
    SetMonoLocked(key.first);
    {
      std::lock_guard<std::mutex> wake_lock(Access::Mutex(wake));
      Access::TimedOut(wake) = true;
      Access::CondVar(wake).notify_all();
    }
    // Nothing else removes this entry: the woken thread does, under mu_, just
    // before returning. Await evaluates the condition with mu_ held.
    const auto returned = [this, &key]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return !waiters_.contains(key);
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&returned), kWokenThreadLimit)) {
      Die(absl::StrCat(
          "AdvanceTo(", Show(target), ") woke the thread waiting until ",
          Show(key.first), ", and it has not returned from WaitUntil within ",
          absl::FormatDuration(kWokenThreadLimit), " of real time"));
    }
  }
  SetMonoLocked(target);
}

void SimulatedClock::SetMonoLocked(MonoTime t) {
  wall_ += t - mono_;
  mono_ = t;
}

void SimulatedClock::StepWall(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  wall_ += d;
}

void SimulatedClock::SetWall(absl::Time t) {
  absl::MutexLock lock(&mu_);
  wall_ = t;
}

bool SimulatedClock::BlockUntilWaiters(int n, absl::Duration limit) {
  absl::MutexLock lock(&mu_);
  // Await evaluates the condition with mu_ held.
  const auto enough = [this, n]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return static_cast<int>(waiters_.size()) >= n;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&enough), limit);
}

int SimulatedClock::NumWaiters() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(waiters_.size());
}

}  // namespace chime
