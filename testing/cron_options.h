// Small builders for cron::ParseOptions and UTC instants, shared by the cron
// tests.
//
//   Schedule::Parse("30 2 * * *", Zone("Europe/Berlin"));
//   Schedule::Parse("0 0 0 ? * 6#3", Quartz());
//
// (Designated initializers would read as well, but GCC 12 warns about every
// member they leave out.)
#ifndef CHIME_TESTING_CRON_OPTIONS_H_
#define CHIME_TESTING_CRON_OPTIONS_H_

#include "absl/strings/string_view.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "chime/cron.h"

namespace chime::testing {

// REQUIRES (all taking a string_view): the string outlives the options.
inline cron::ParseOptions Zone(absl::string_view zone,
                               cron::DstPolicy dst = {}) {
  cron::ParseOptions o;
  o.zone = zone;
  o.dst = dst;
  return o;
}
inline cron::ParseOptions WithDialect(cron::Dialect d) {
  cron::ParseOptions o;
  o.dialect = d;
  return o;
}
inline cron::ParseOptions Quartz() {
  return WithDialect(cron::Dialect::kQuartz);
}
inline cron::ParseOptions AllDays() {
  cron::ParseOptions o;
  o.day_match = cron::DayMatch::kAll;
  return o;
}
inline cron::ParseOptions Keyed(absl::string_view key) {
  cron::ParseOptions o;
  o.hash_key = key;
  return o;
}
inline cron::ParseOptions Anchored(absl::Time every_anchor) {
  cron::ParseOptions o;
  o.every_anchor = every_anchor;
  return o;
}

inline absl::Time Utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  return absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s),
                         absl::UTCTimeZone());
}

}  // namespace chime::testing

#endif  // CHIME_TESTING_CRON_OPTIONS_H_
