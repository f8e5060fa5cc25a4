// Fast RFC 3339 timestamps: formatting instants in UTC and parsing them back.
//
// absl::FormatTime and absl::ParseTime handle any format in any zone. These
// functions handle the one format chime exchanges with the outside world (job
// files, the JSON API, `chime cron next --json`) about eight times faster
// (roughly 100 ns instead of 850 ns per call in a Release build), because the
// batch paths format and parse a timestamp per case and absl's general
// formatter dominated their profile. They agree with absl on every instant
// they accept (tested on random instants against absl::FormatTime and
// absl::ParseTime), except that they write years 0000-0999 with four digits.
//
//   FormatUtc(absl::FromUnixSeconds(1774830600))
//       -> "2026-03-30T00:30:00Z"
//   FormatUtc(absl::FromUnixMillis(1774830600250))
//       -> "2026-03-30T00:30:00.25Z"
//   ParseRfc3339("2026-03-30T02:30:00+02:00")
//       -> the instant of the first example
//   ParseRfc3339("2026-03-30 02:30")
//       -> InvalidArgument: no seconds, no UTC offset
//
// Thread-safety: pure functions.
#ifndef CHIME_SRC_TIME_RFC3339_H_
#define CHIME_SRC_TIME_RFC3339_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace chime::time {

// Appends `t` in UTC as "YYYY-MM-DDTHH:MM:SSZ". Fire times are whole seconds
// and print exactly so. A non-zero sub-second part is not dropped: it prints as
// a fraction of up to nine digits with trailing zeros removed ("...:00.25Z"),
// truncated toward the past below a nanosecond -- which is what absl's "%E*S"
// prints for nanosecond-aligned instants. Years outside 0000-9999 (not
// expressible in RFC 3339) and the infinite instants are delegated to
// absl::FormatTime, which writes e.g. "10000-01-01T00:00:00Z",
// "infinite-future" and "infinite-past". Years 0000-0999 get four digits, as
// RFC 3339 requires (absl would write "5-01-01T...").
void AppendUtc(absl::Time t, std::string* out);

// AppendUtc into a fresh string.
std::string FormatUtc(absl::Time t);

// Parses an RFC 3339 date-time: "YYYY-MM-DDTHH:MM:SS", then optionally "."
// and one or more digits (digits past the ninth are ignored: truncated to the
// nanosecond), then "Z" or an offset "+hh:mm" or "-hh:mm" (hh 00-23, mm
// 00-59). As RFC 3339 allows, "t" and "z" may be lower case and one space may
// separate the date from the time. Day numbers are checked against the month.
// A leap second ":60" becomes ":00" of the next minute, its fraction dropped,
// as in absl::ParseTime. Anything else -- a missing offset, "+0200",
// surrounding spaces, trailing text -- is InvalidArgument with a message that
// names the problem and its 1-based column and shows an accepted example.
absl::StatusOr<absl::Time> ParseRfc3339(absl::string_view text);

}  // namespace chime::time

#endif  // CHIME_SRC_TIME_RFC3339_H_
