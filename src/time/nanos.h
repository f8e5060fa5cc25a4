// Wall times and durations as int64 nanoseconds, with the infinities kept:
// absl::InfinitePast / -InfiniteDuration are INT64_MIN, absl::InfiniteFuture /
// InfiniteDuration are INT64_MAX. For encodings and SQL columns; finite values
// outside the int64 range saturate (and so read back as infinite).
//
// Thread-safety: pure functions.
#ifndef CHIME_SRC_TIME_NANOS_H_
#define CHIME_SRC_TIME_NANOS_H_

#include <cstdint>

#include "absl/time/time.h"

namespace chime::time {

int64_t TimeToNanos(absl::Time t);
absl::Time NanosToTime(int64_t ns);
int64_t DurationToNanos(absl::Duration d);
absl::Duration NanosToDuration(int64_t ns);

}  // namespace chime::time

#endif  // CHIME_SRC_TIME_NANOS_H_
