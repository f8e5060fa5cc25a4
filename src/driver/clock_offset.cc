#include "src/driver/clock_offset.h"

#include "absl/strings/str_cat.h"

namespace chime::driver {

std::string ClockOffset::ToString() const {
  // The store ahead of us means our clock is behind.
  const absl::string_view side =
      offset >= absl::ZeroDuration() ? "behind" : "ahead of";
  return absl::StrCat("this node's clock is ",
                      absl::FormatDuration(absl::AbsDuration(offset)), " ",
                      side, " the store's (measured to within ",
                      absl::FormatDuration(uncertainty), ")");
}

std::optional<ClockOffset> MeasureClockOffset(absl::Time store_time,
                                              absl::Time sent,
                                              absl::Time received) {
  if (store_time == absl::InfinitePast() || received < sent) {
    return std::nullopt;
  }
  const absl::Duration half_trip = (received - sent) / 2;
  return ClockOffset{store_time - (sent + half_trip), half_trip};
}

}  // namespace chime::driver
