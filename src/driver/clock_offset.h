// ClockOffset: how far this process's wall clock is from its store's.
//
// Every lease grant and renewal carries the store's wall clock
// (LeaseGrant::store_time; the database's, for a shared store). Read between
// `sent` and `received` on this process's wall clock, it says that the
// store's clock minus ours was
//   offset = store_time - (sent + received) / 2,
// give or take half the round trip (`uncertainty`). The offset surely exceeds
// a bound B when |offset| - uncertainty > B. A scheduler whose clock is off
// by more than SchedulerOptions::max_clock_skew does not take the store's
// lease, and one holding it hears of it (on_clock_skew): its fires would
// start early or late by about the offset.
//
// Thread-safety: plain values and functions.
#ifndef CHIME_SRC_DRIVER_CLOCK_OFFSET_H_
#define CHIME_SRC_DRIVER_CLOCK_OFFSET_H_

#include <optional>
#include <string>

#include "absl/time/time.h"

namespace chime::driver {

struct ClockOffset {
  absl::Duration offset;       // the store's clock minus this process's
  absl::Duration uncertainty;  // half the round trip

  bool SurelyExceeds(absl::Duration bound) const {
    return absl::AbsDuration(offset) - uncertainty > bound;
  }
  // E.g. "this node's clock is 30.2s behind the store's (measured to within
  // 1ms)".
  std::string ToString() const;
};

// Nothing when the store did not say its time (store_time InfinitePast) or
// this clock stepped back during the request (received < sent).
std::optional<ClockOffset> MeasureClockOffset(absl::Time store_time,
                                              absl::Time sent,
                                              absl::Time received);

}  // namespace chime::driver

#endif  // CHIME_SRC_DRIVER_CLOCK_OFFSET_H_
