// OffsetClock: the real clock with its wall time moved by an offset a test
// may change at any time: the clock of another machine (a store's), in real
// time. The monotonic clock and waits are the real ones.
//
// Thread-safety: every method may be called from any thread.
#ifndef CHIME_TESTING_OFFSET_CLOCK_H_
#define CHIME_TESTING_OFFSET_CLOCK_H_

#include <atomic>
#include <cstdint>

#include "absl/time/time.h"
#include "chime/clock.h"

namespace chime::testing {

class OffsetClock final : public Clock {
 public:
  explicit OffsetClock(absl::Duration offset = absl::ZeroDuration()) {
    Set(offset);
  }
  void Set(absl::Duration offset) {
    offset_ns_.store(absl::ToInt64Nanoseconds(offset));
  }

  absl::Time Now() const override {
    return RealClock::Get().Now() + absl::Nanoseconds(offset_ns_.load());
  }
  MonoTime MonoNow() const override { return RealClock::Get().MonoNow(); }
  bool WaitUntil(MonoTime deadline, Wakeup& wake) override {
    return RealClock::Get().WaitUntil(deadline, wake);
  }

 private:
  std::atomic<int64_t> offset_ns_{0};
};

}  // namespace chime::testing

#endif  // CHIME_TESTING_OFFSET_CLOCK_H_
