#include "src/cron/matcher.h"

#include <bit>

namespace chime::cron::internal {
namespace {

constexpr int kNone = -1;

// Lowest set bit of `mask` at position >= from, or kNone.
inline int NextBit(uint64_t mask, int from) {
  if (from >= 64) return kNone;
  const uint64_t m = mask & (~uint64_t{0} << from);
  return m == 0 ? kNone : std::countr_zero(m);
}

// Highest set bit of `mask` at position <= from, or kNone.
inline int PrevBit(uint64_t mask, int from) {
  if (from < 0) return kNone;
  const uint64_t m = from >= 63 ? mask : mask & ((uint64_t{2} << from) - 1);
  return m == 0 ? kNone : 63 - std::countl_zero(m);
}

// Days 1, 8, 15, 22, 29 share a weekday; shifted so that the first lands on
// weekday w.
constexpr std::array<std::array<uint32_t, 7>, 128> MakeDowDays() {
  constexpr uint64_t kSameWeekday = 1 | 1 << 7 | 1 << 14 | 1 << 21 | 1 << 28;
  std::array<std::array<uint32_t, 7>, 128> table = {};
  for (int dow = 0; dow < 128; ++dow) {
    for (int first = 0; first < 7; ++first) {
      uint64_t days = 0;
      for (int w = 0; w < 7; ++w) {
        if ((dow >> w) & 1) days |= kSameWeekday << (1 + (w - first + 7) % 7);
      }
      table[dow][first] = static_cast<uint32_t>(days);
    }
  }
  return table;
}

constexpr std::array<std::array<uint32_t, 7>, 128> kDowDays = MakeDowDays();

}  // namespace

const std::array<uint32_t, 7>& DowDays(uint8_t dow) {
  return kDowDays[dow & 0x7F];
}

bool Matcher::YearMatches(int year) const {
  if (year < kMinYear || year > kMaxYear) return false;
  if (fields->all_years) return true;
  const int i = year - kMinYear;
  return ((*fields->years)[i / 64] >> (i % 64)) & 1;
}

bool Matcher::AnyMatch() const {
  const Schedule::Fields& f = *fields;
  if (f.hours == 0 || f.minutes == 0 || f.seconds == 0 || f.months == 0)
    return false;
  std::array<uint8_t, 12 * 4> seen =
      {};  // [month, length - 28] -> bit per weekday of the 1st
  for (int y = kMinYear; y <= kMaxYear; ++y) {
    if (!YearMatches(y)) continue;
    for (int mo = NextBit(f.months, 1); mo != kNone;
         mo = NextBit(f.months, mo + 1)) {
      const int shape = (mo - 1) * 4 + time::DaysInMonth(y, mo) - 28;
      const int first_weekday =
          time::WeekdayFromDays(time::DaysFromCivil(y, mo, 1));
      if ((seen[shape] >> first_weekday) & 1) continue;
      seen[shape] |= static_cast<uint8_t>(1u << first_weekday);
      if (DayMask(y, mo) != 0) return true;
    }
  }
  return false;
}

uint64_t Matcher::DayMask(int year, int month) const {
  const int dim = time::DaysInMonth(year, month);
  const uint64_t valid = ((uint64_t{1} << dim) - 1) << 1;
  if (days_unrestricted) return valid;
  const Schedule::Fields& f = *fields;
  uint64_t dom = f.dom;
  if (dom_only) {
    // Day-of-month alone decides, and needs no weekday.
    for (uint32_t bits = f.dom_last_offset; bits != 0; bits &= bits - 1) {
      const int day = dim - std::countr_zero(bits);
      if (day >= 1) dom |= uint64_t{1} << day;
    }
    return dom & valid;
  }
  const int first_weekday =
      time::WeekdayFromDays(time::DaysFromCivil(year, month, 1));
  auto weekday_of = [&](int day) { return (first_weekday + day - 1) % 7; };

  if (f.dom_last_offset != 0) {
    for (uint32_t bits = f.dom_last_offset; bits != 0; bits &= bits - 1) {
      const int day = dim - std::countr_zero(bits);
      if (day >= 1) dom |= uint64_t{1} << day;
    }
  }
  if (f.dom_last_weekday) {
    const int wd = weekday_of(dim);
    dom |= uint64_t{1} << (wd == 6 ? dim - 1 : wd == 0 ? dim - 2 : dim);
  }
  if (f.dom_nearest != 0) {
    // Nearest weekday to day d, never leaving the month; a day beyond the
    // month's end never fires.
    for (uint32_t bits = f.dom_nearest; bits != 0; bits &= bits - 1) {
      const int d = std::countr_zero(bits);
      if (d > dim) continue;
      const int wd = weekday_of(d);
      int day = d;
      if (wd == 6)
        day = d == 1 ? 3 : d - 1;  // Saturday -> Friday, or Monday the 3rd
      if (wd == 0)
        day = d == dim ? d - 2
                       : d + 1;  // Sunday -> Monday, or Friday before the end
      dom |= uint64_t{1} << day;
    }
  }

  uint64_t dow = (*dow_days)[first_weekday];
  if (f.dow_last != 0) {
    const int last_wd = weekday_of(dim);
    for (uint32_t bits = f.dow_last; bits != 0; bits &= bits - 1) {
      const int w = std::countr_zero(bits);
      dow |= uint64_t{1} << (dim - (last_wd - w + 7) % 7);
    }
  }
  for (int k = 0; k < 5; ++k) {
    for (uint32_t bits = f.dow_nth[k]; bits != 0; bits &= bits - 1) {
      const int w = std::countr_zero(bits);
      const int day = 1 + (w - first_weekday + 7) % 7 + 7 * k;
      if (day <= dim) dow |= uint64_t{1} << day;
    }
  }

  // As Vixie cron: a field written with a leading `*` (or `?`) makes the two
  // fields combine with AND, whatever its step, so "0 0 */2 * 1" is
  // odd-numbered Mondays; two restricted fields combine with OR unless
  // DayMatch::kAll.
  const bool all = day_match_all || f.dom_star || f.dow_star;
  return (all ? (dom & dow) : (dom | dow)) & valid;
}

namespace {

// The smallest matching time of day >= (h0, m0, s0), as seconds since midnight,
// or kNone. A carry from seconds into minutes into hours never leaves the day.
int TimeOnOrAfter(const Schedule::Fields& f, int h0, int m0, int s0) {
  int h = NextBit(f.hours, h0);
  if (h == kNone) return kNone;
  if (h == h0) {
    int m = NextBit(f.minutes, m0);
    if (m == m0) {
      const int s = NextBit(f.seconds, s0);
      if (s != kNone) return h * 3600 + m * 60 + s;
      m = NextBit(f.minutes, m0 + 1);
    }
    if (m != kNone) return h * 3600 + m * 60 + NextBit(f.seconds, 0);
    h = NextBit(f.hours, h0 + 1);
    if (h == kNone) return kNone;
  }
  return h * 3600 + NextBit(f.minutes, 0) * 60 + NextBit(f.seconds, 0);
}

// The largest matching time of day <= (h0, m0, s0), or kNone.
int TimeOnOrBefore(const Schedule::Fields& f, int h0, int m0, int s0) {
  int h = PrevBit(f.hours, h0);
  if (h == kNone) return kNone;
  if (h == h0) {
    int m = PrevBit(f.minutes, m0);
    if (m == m0) {
      const int s = PrevBit(f.seconds, s0);
      if (s != kNone) return h * 3600 + m * 60 + s;
      m = PrevBit(f.minutes, m0 - 1);
    }
    if (m != kNone) return h * 3600 + m * 60 + PrevBit(f.seconds, 59);
    h = PrevBit(f.hours, h0 - 1);
    if (h == kNone) return kNone;
  }
  return h * 3600 + PrevBit(f.minutes, 59) * 60 + PrevBit(f.seconds, 59);
}

void SetTimeOfDay(int seconds, time::CivilFields* c) {
  c->hour = seconds / 3600;
  c->minute = seconds / 60 % 60;
  c->second = seconds % 60;
}

}  // namespace

bool Matcher::FindNext(time::CivilFields* c) const {
  const Schedule::Fields& f = *fields;
  int y = c->year, mo = c->month, d = c->day;
  uint64_t mask = 0;
  // The starting date itself, from the starting time of day.
  if (YearMatches(y) && ((f.months >> mo) & 1)) {
    mask = DayMask(y, mo);
    if ((mask >> d) & 1) {
      const int tod = TimeOnOrAfter(f, c->hour, c->minute, c->second);
      if (tod != kNone) {
        SetTimeOfDay(tod, c);
        return true;
      }
    }
  } else {
    mask = 0;  // forces a month or year carry below
  }
  // The first matching date after it, at the first matching time of day. Each
  // pass moves to a later month or year; the year bound ends the loop.
  ++d;
  while (y <= kMaxYear) {
    const int d2 = NextBit(mask, d);
    if (d2 != kNone) {
      c->year = y;
      c->month = mo;
      c->day = d2;
      SetTimeOfDay(TimeOnOrAfter(f, 0, 0, 0), c);
      return true;
    }
    d = 1;
    mo = NextBit(f.months, mo + 1);
    while (mo == kNone || !YearMatches(y) ||
           (leap_years_only && !time::IsLeapYear(y))) {
      if (++y > kMaxYear) return false;
      mo = NextBit(f.months, 1);
    }
    mask = DayMask(y, mo);
  }
  return false;
}

bool Matcher::FindPrev(time::CivilFields* c) const {
  const Schedule::Fields& f = *fields;
  int y = c->year, mo = c->month, d = c->day;
  uint64_t mask = 0;
  if (YearMatches(y) && ((f.months >> mo) & 1)) {
    mask = DayMask(y, mo);
    if ((mask >> d) & 1) {
      const int tod = TimeOnOrBefore(f, c->hour, c->minute, c->second);
      if (tod != kNone) {
        SetTimeOfDay(tod, c);
        return true;
      }
    }
  }
  --d;
  while (y >= kMinYear) {
    const int d2 = PrevBit(mask, d);
    if (d2 != kNone) {
      c->year = y;
      c->month = mo;
      c->day = d2;
      SetTimeOfDay(TimeOnOrBefore(f, 23, 59, 59), c);
      return true;
    }
    d = 31;
    mo = PrevBit(f.months, mo - 1);
    while (mo == kNone || !YearMatches(y) ||
           (leap_years_only && !time::IsLeapYear(y))) {
      if (--y < kMinYear) return false;
      mo = PrevBit(f.months, 12);
    }
    mask = DayMask(y, mo);
  }
  return false;
}

}  // namespace chime::cron::internal
