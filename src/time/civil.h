// Fast civil-time arithmetic on the proleptic Gregorian calendar, in whole
// seconds.
//
// absl's civil types are the general tool; these few functions exist because
// the cron engine's hot path converts between Unix seconds and (year, month,
// day, hour, minute, second) several times per `Next()` and needs it in a
// handful of nanoseconds. They are exact for every year that fits in int32 and
// agree with absl::CivilSecond (tested).
//
// Thread-safety: pure functions.
#ifndef CHIME_SRC_TIME_CIVIL_H_
#define CHIME_SRC_TIME_CIVIL_H_

#include <cstdint>

namespace chime::time {

struct CivilFields {
  int32_t year = 1970;
  int month = 1;  // 1-12
  int day = 1;    // 1-31
  int hour = 0;   // 0-23
  int minute = 0;
  int second = 0;
};

constexpr bool IsLeapYear(int64_t y) {
  return (y % 4 == 0) && (y % 100 != 0 || y % 400 == 0);
}

constexpr int DaysInMonth(int64_t year, int month) {
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeapYear(year) ? 29 : kDays[month - 1];
}

// Days since 1970-01-01 of the given date. REQUIRES: 1 <= month <= 12, 1 <= day
// <= 31.
int64_t DaysFromCivil(int64_t year, int month, int day);

// The date `days` days after 1970-01-01.
void CivilFromDays(int64_t days, int32_t* year, int* month, int* day);

// Day of week of the date `days` days after 1970-01-01: 0 = Sunday ... 6 =
// Saturday.
constexpr int WeekdayFromDays(int64_t days) {
  const int64_t w = (days + 4) % 7;  // 1970-01-01 was a Thursday.
  return static_cast<int>(w < 0 ? w + 7 : w);
}

// Seconds since the epoch <-> civil fields, treating the civil time as UTC.
int64_t SecondsFromCivil(const CivilFields& c);
CivilFields CivilFromSeconds(int64_t seconds);

}  // namespace chime::time

#endif  // CHIME_SRC_TIME_CIVIL_H_
