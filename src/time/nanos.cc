#include "src/time/nanos.h"

#include <limits>

namespace chime::time {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

}  // namespace

int64_t TimeToNanos(absl::Time t) {
  if (t == absl::InfinitePast()) return kMin;
  if (t == absl::InfiniteFuture()) return kMax;
  return absl::ToUnixNanos(t);
}

absl::Time NanosToTime(int64_t ns) {
  if (ns == kMin) return absl::InfinitePast();
  if (ns == kMax) return absl::InfiniteFuture();
  return absl::FromUnixNanos(ns);
}

int64_t DurationToNanos(absl::Duration d) {
  if (d == absl::InfiniteDuration()) return kMax;
  if (d == -absl::InfiniteDuration()) return kMin;
  return absl::ToInt64Nanoseconds(d);
}

absl::Duration NanosToDuration(int64_t ns) {
  if (ns == kMax) return absl::InfiniteDuration();
  if (ns == kMin) return -absl::InfiniteDuration();
  return absl::Nanoseconds(ns);
}

}  // namespace chime::time
