// The civil-time search at the heart of Next/Prev: given bit sets for each
// field, find the first (or last) wall time at or after (or before) a given one
// that matches every field.
//
// It walks from the largest field to the smallest. At each level it takes the
// next set bit at or above the current value (one count-trailing-zeros); if
// there is none it carries into the field above and resets the fields below to
// their minimum. Example, "30 8-18 * * 1-5" from Friday 2026-03-27 18:45: hour
// 18 ok, minute: no bit >= 45 -> hour 19: no bit -> next day Saturday: not in
// the day mask -> Monday 30th -> hour 8 -> minute 30: Monday 2026-03-30
// 08:30:00. A month's matching days are computed once per month visited, from
// precomputed weekday masks.
//
// Thread-safety: pure functions of immutable data.
#ifndef CHIME_SRC_CRON_MATCHER_H_
#define CHIME_SRC_CRON_MATCHER_H_

#include <array>
#include <cstdint>

#include "chime/cron.h"
#include "src/time/civil.h"

namespace chime::cron::internal {

// [weekday of the 1st] -> the days (bits 1-31) of a month whose weekday is in
// `dow` (bit w: weekday w, 0 = Sunday; bits 0-6). One table for every
// schedule, built at compile time.
const std::array<uint32_t, 7>& DowDays(uint8_t dow);

struct Matcher {
  const Schedule::Fields* fields;
  bool days_unrestricted;  // fast path: every day matches
  bool dom_only;  // fast path: day-of-month alone decides and needs no weekday
  bool day_match_all;  // DayMatch::kAll
  const std::array<uint32_t, 7>*
      dow_days;          // [weekday of the 1st] -> days matching `dow`
  bool leap_years_only;  // only Feb 29 can match: skip other years at once

  // Bit d (1-31) set for each matching day of (year, month).
  uint64_t DayMask(int year, int month) const;

  bool YearMatches(int year) const;

  // Whether any date in [kMinYear, kMaxYear] matches. A month's matching days
  // depend only on the month, its length and the weekday of its first day (and
  // whether its year is allowed), so at most 12 * 2 * 7 distinct month shapes
  // are ever evaluated: a schedule that never fires is found in microseconds,
  // without a search of centuries.
  bool AnyMatch() const;

  // Smallest matching wall time >= *c with year <= kMaxYear; false if none.
  // REQUIRES: *c is a normalized civil time with year >= kMinYear.
  bool FindNext(time::CivilFields* c) const;

  // Largest matching wall time <= *c with year >= kMinYear; false if none.
  // REQUIRES: *c is a normalized civil time with year <= kMaxYear.
  bool FindPrev(time::CivilFields* c) const;
};

}  // namespace chime::cron::internal

#endif  // CHIME_SRC_CRON_MATCHER_H_
