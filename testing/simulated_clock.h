// SimulatedClock: a Clock that moves only when a test moves it.
//
// Code under test takes a `Clock&`; a test hands it a SimulatedClock and drives
// time by hand, so timers, timeouts and schedules run without real sleeping and
// without flakiness:
//
//   SimulatedClock clock;
//   std::thread t([&] { clock.SleepFor(absl::Seconds(10)); });
//   ASSERT_TRUE(clock.BlockUntilWaiters(1));  // `t` is now asleep.
//   clock.AdvanceBy(absl::Seconds(10));       // Returns once `t` has woken.
//   t.join();
//
// Two times are kept, as in the real world:
//   - monotonic time starts at kMonoStart and moves only through AdvanceBy and
//     AdvanceTo;
//   - wall time starts where the constructor says and moves by the same amount
//     in AdvanceBy and AdvanceTo; StepWall and SetWall also move it alone, as
//     NTP or an operator would. Such a step wakes nobody: waits run on
//     monotonic time.
//
// How advancing wakes sleepers, deterministically: AdvanceTo(target) takes the
// pending deadlines <= target in deadline order (equal deadlines in the order
// their waits began). For each, it sets the time to exactly that deadline,
// wakes that one sleeper (its WaitUntil returns false), and waits until that
// thread has returned from WaitUntil before going on. Finally it sets the time
// to `target`. So every sleeper returns while MonoNow() equals its deadline.
// A thread that goes back to sleep during the advance, with a deadline <=
// target, is woken by the same advance if it starts waiting before the advance
// ends, and returns at once otherwise.
//
// Known limit: AdvanceTo does not wait for what a woken thread does after
// WaitUntil returns; that runs concurrently with the rest of the advance and
// may already see a later time. A test that needs the woken thread to act
// before time moves on advances to that deadline only, then waits for the
// thread's next step, e.g. with BlockUntilWaiters when it goes back to sleep:
//
//   clock.AdvanceTo(first_deadline);
//   ASSERT_TRUE(clock.BlockUntilWaiters(1));  // The timer thread sleeps again.
//   clock.AdvanceTo(second_deadline);
//
// Real time serves only as a safety net, so that a broken test fails with a
// message instead of hanging: AdvanceTo aborts if a woken thread has not
// returned within kWokenThreadLimit, and a thread aborts if it stays in
// WaitUntil for kStuckWaiterLimit with nothing waking it.
//
// Thread-safety: every method may be called from any thread, including a thread
// woken by an advance. Advances are serialized: a second AdvanceTo waits until
// the first has finished. Destroying the clock while a thread is inside
// WaitUntil aborts.
#ifndef CHIME_TESTING_SIMULATED_CLOCK_H_
#define CHIME_TESTING_SIMULATED_CLOCK_H_

#include <cstdint>
#include <map>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "chime/clock.h"

namespace chime {

class SimulatedClock final : public Clock {
 public:
  // The wall time a default-constructed clock starts at: 2026-01-01T00:00:00Z.
  static absl::Time DefaultStart() {
    return absl::FromCivil(absl::CivilSecond(2026, 1, 1, 0, 0, 0),
                           absl::UTCTimeZone());
  }
  // Where monotonic time starts: any fixed value would do; not zero, so that a
  // MonoTime() left uninitialized by mistake reads as "long ago" rather than
  // "now".
  static constexpr MonoTime kMonoStart =
      MonoTime::FromSinceOrigin(absl::Hours(1));

  // How long (real time) AdvanceTo waits for a woken thread to return from
  // WaitUntil.
  static constexpr absl::Duration kWokenThreadLimit = absl::Seconds(5);
  // How long (real time) BlockUntilWaiters waits before giving up, by default.
  static constexpr absl::Duration kBlockUntilWaitersLimit = absl::Seconds(5);
  // How long (real time) a thread may stay in WaitUntil without being notified
  // or reaching its deadline before it aborts the process as a stuck test.
  static constexpr absl::Duration kStuckWaiterLimit = absl::Seconds(60);

  explicit SimulatedClock(absl::Time wall_start = DefaultStart());
  SimulatedClock(const SimulatedClock&) = delete;
  SimulatedClock& operator=(const SimulatedClock&) = delete;
  // REQUIRES: no thread is inside WaitUntil (aborts otherwise).
  ~SimulatedClock() override;

  absl::Time Now() const override;
  MonoTime MonoNow() const override;
  // Blocks until `wake` is notified or AdvanceTo reaches `deadline`. A pending
  // notification is consumed and returns true at once, even if the deadline has
  // passed; otherwise a deadline already reached returns false at once. If the
  // deadline is reached and a notification arrives before the woken thread
  // runs, the notification wins (true), as with RealClock.
  bool WaitUntil(MonoTime deadline, Wakeup& wake) override;

  // Moves monotonic and wall time forward by `d`, waking sleepers as described
  // above. REQUIRES: 0 <= d < InfiniteDuration() (aborts otherwise).
  void AdvanceBy(absl::Duration d);
  // Moves monotonic time forward to `target` (wall time by the same amount),
  // waking sleepers as described above. Returns after every sleeper it woke has
  // returned from WaitUntil. REQUIRES: MonoNow() <= target <
  // MonoTime::Infinite() (aborts otherwise).
  void AdvanceTo(MonoTime target);

  // Steps wall time by `d` (either sign), as an NTP correction would. Monotonic
  // time is unchanged and no sleeper is woken.
  void StepWall(absl::Duration d);
  // Sets wall time to `t`. Monotonic time is unchanged and no sleeper is woken.
  void SetWall(absl::Time t);

  // Blocks (in real time, at most `limit`) until at least `n` threads are
  // inside WaitUntil. Returns true once they are, false on timeout. A WaitUntil
  // that returns at once (past deadline, pending notification) never counts.
  bool BlockUntilWaiters(int n, absl::Duration limit = kBlockUntilWaitersLimit);
  // The number of threads inside WaitUntil right now.
  int NumWaiters() const;

 private:
  // Waiters are ordered by deadline, then by the order their waits began.
  using WaiterKey = std::pair<MonoTime, uint64_t>;

  // The body of AdvanceTo, once advances are serialized.
  void AdvanceToHoldingAdvanceMu(MonoTime target)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(advance_mu_);
  // Sets monotonic time to `t` and moves wall time by the same amount.
  void SetMonoLocked(MonoTime t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Held for the whole of an AdvanceTo, so that advances do not interleave.
  // Acquired before mu_.
  absl::Mutex advance_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // Acquired before any Wakeup's mutex, never after one.
  mutable absl::Mutex mu_;
  MonoTime mono_ ABSL_GUARDED_BY(mu_) = kMonoStart;
  absl::Time wall_ ABSL_GUARDED_BY(mu_);
  uint64_t next_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  // The threads inside WaitUntil, by deadline, with the Wakeup each waits on. A
  // thread adds its entry when it starts waiting and removes it (under mu_)
  // just before WaitUntil returns, so a Wakeup named here is alive while mu_ is
  // held.
  std::map<WaiterKey, Wakeup*> waiters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace chime

#endif  // CHIME_TESTING_SIMULATED_CLOCK_H_
