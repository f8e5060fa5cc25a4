#include "src/time/civil.h"

namespace chime::time {
namespace {

// The calendar is treated as starting on March 1 so that the leap day is the
// last day of the "year"; a 400-year era has a fixed number of days (146097).
// Month index mp: 0 = March ... 11 = February. The day-of-year of the first of
// month mp is (153 * mp + 2) / 5, a linear fit that is exact for the 30/31-day
// pattern from March to January.
constexpr int64_t kDaysPerEra = 146097;
constexpr int64_t kEpochShift = 719468;  // days from 0000-03-01 to 1970-01-01

int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

int64_t DaysFromCivilSlow(int64_t year, int month, int day);
void CivilFromDaysSlow(int64_t days, int32_t* year, int* month, int* day);

// The hot path (cron Next/Prev) converts dates of 1969-2401 over and over; a
// table of the first day of each month in that range turns both conversions
// into a lookup and a short scan.
constexpr int kTableFirstYear = 1969;
constexpr int kTableLastYear = 2401;
constexpr int kTableMonths = (kTableLastYear - kTableFirstYear + 1) * 12;

struct MonthTable {
  int32_t first_day[kTableMonths +
                    1];  // days since 1970-01-01 of the 1st of each month
  MonthTable() {
    for (int i = 0; i <= kTableMonths; ++i) {
      first_day[i] = static_cast<int32_t>(
          DaysFromCivilSlow(kTableFirstYear + i / 12, i % 12 + 1, 1));
    }
  }
};

const MonthTable& Months() {
  static const MonthTable* table = new MonthTable;
  return *table;
}

}  // namespace

int64_t DaysFromCivil(int64_t year, int month, int day) {
  if (year >= kTableFirstYear && year <= kTableLastYear) {
    return Months().first_day[(year - kTableFirstYear) * 12 + month - 1] + day -
           1;
  }
  return DaysFromCivilSlow(year, month, day);
}

void CivilFromDays(int64_t days, int32_t* year, int* month, int* day) {
  const MonthTable& t = Months();
  if (days >= t.first_day[0] && days < t.first_day[kTableMonths]) {
    // Estimate the month index from the mean Gregorian month (146097 days per
    // 4800 months), then correct by at most a step or two.
    int i = static_cast<int>((days - t.first_day[0]) * 4800 / 146097);
    if (i >= kTableMonths) i = kTableMonths - 1;
    while (t.first_day[i] > days) --i;
    while (t.first_day[i + 1] <= days) ++i;
    *year = kTableFirstYear + i / 12;
    *month = i % 12 + 1;
    *day = static_cast<int>(days - t.first_day[i]) + 1;
    return;
  }
  CivilFromDaysSlow(days, year, month, day);
}

namespace {

int64_t DaysFromCivilSlow(int64_t year, int month, int day) {
  const int64_t y = year - (month <= 2 ? 1 : 0);
  const int64_t era = FloorDiv(y, 400);
  const int64_t year_of_era = y - era * 400;                 // [0, 399]
  const int64_t mp = month > 2 ? month - 3 : month + 9;      // [0, 11]
  const int64_t day_of_year = (153 * mp + 2) / 5 + day - 1;  // [0, 365]
  const int64_t day_of_era =
      year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * kDaysPerEra + day_of_era - kEpochShift;
}

void CivilFromDaysSlow(int64_t days, int32_t* year, int* month, int* day) {
  const int64_t z = days + kEpochShift;
  const int64_t era = FloorDiv(z, kDaysPerEra);
  const int64_t day_of_era = z - era * kDaysPerEra;  // [0, 146096]
  const int64_t year_of_era = (day_of_era - day_of_era / 1460 +
                               day_of_era / 36524 - day_of_era / 146096) /
                              365;
  const int64_t day_of_year =
      day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const int64_t mp = (5 * day_of_year + 2) / 153;
  *day = static_cast<int>(day_of_year - (153 * mp + 2) / 5 + 1);
  *month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *year = static_cast<int32_t>(year_of_era + era * 400 + (*month <= 2 ? 1 : 0));
}

}  // namespace

int64_t SecondsFromCivil(const CivilFields& c) {
  return DaysFromCivil(c.year, c.month, c.day) * 86400 + c.hour * 3600 +
         c.minute * 60 + c.second;
}

CivilFields CivilFromSeconds(int64_t seconds) {
  const int64_t days = FloorDiv(seconds, 86400);
  int64_t rest = seconds - days * 86400;
  CivilFields c;
  CivilFromDays(days, &c.year, &c.month, &c.day);
  c.hour = static_cast<int>(rest / 3600);
  rest %= 3600;
  c.minute = static_cast<int>(rest / 60);
  c.second = static_cast<int>(rest % 60);
  return c;
}

}  // namespace chime::time
