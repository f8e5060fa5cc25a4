// Schedule: compiling the parsed fields into bit sets, and Next/Prev across
// time-zone offsets.
//
// Next(after) works on segments of constant UTC offset (time::ZoneTable).
// Inside a segment with offset o, wall time w is the instant w - o, so the
// first match is the civil search's answer mapped back -- if it lands before
// the segment ends. Two cases need the daylight-saving policy:
//
//  - spring forward (the next segment's offset is larger): wall times in [end +
//  o, end + o_next)
//    never occur. If the first match lies there and the schedule has fixed
//    hours and the gap policy is kRunAtTransition, it fires at the transition
//    instant `end`. Berlin 2026-03-29, "30 2 * * *": 02:30 does not exist;
//    fires at 03:00 CEST (01:00Z).
//  - fall back (this segment starts with a smaller offset than the one before):
//  wall times in
//    [start + o, start + o_prev) occurred already in the previous segment. A
//    fixed-hour schedule with RepeatPolicy::kOnce skips them here;
//    wildcard-hour schedules and kTwice fire again. New York 2026-11-01, "30 1
//    * * *": 01:30 EDT (05:30Z) fires, 01:30 EST (06:30Z) does not.
//
// Otherwise the search moves to the next segment. Prev mirrors all of this.
#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "chime/cron.h"
#include "src/base/status_macros.h"
#include "src/cron/matcher.h"
#include "src/cron/parser.h"
#include "src/time/civil.h"
#include "src/time/zone_table.h"

namespace chime::cron {
namespace {

using internal::FieldId;
using internal::Item;
using time::ZoneTable;

constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min();

// More than the largest difference between two UTC offsets of one zone (offsets
// lie within -12h..+14h; the largest jump ever made, Samoa's in 2011, was 24h).
constexpr int64_t kMaxOffsetSwing = 2 * 86400;

// Instants that bound the search: a little before kMinYear and after kMaxYear
// in UTC, so that every zone's wall times in [kMinYear, kMaxYear] are covered.
const int64_t kFirstSearchSecond =
    time::DaysFromCivil(kMinYear, 1, 1) * 86400 - 2 * 86400;
const int64_t kLastSearchSecond =
    time::DaysFromCivil(kMaxYear + 1, 1, 1) * 86400 + 2 * 86400;

// `@every` schedules are bounded by the same years, in UTC.
const int64_t kFirstCivilSecond = time::DaysFromCivil(kMinYear, 1, 1) * 86400;
const int64_t kLastCivilSecond =
    time::DaysFromCivil(kMaxYear + 1, 1, 1) * 86400 - 1;

// The values of a range item, lo, lo+step, ... up to hi, wrapping around the
// field's domain [fmin, fmin + wrap_span) when hi < lo, each passed to
// `set`. Weekday ranges that wrap were normalized to 0-6 by the parser.
template <typename Set>
void ForEachInRange(const Item& item, int fmin, int fmax, int wrap_span,
                    bool dow, Set set) {
  const int length =
      item.hi >= item.lo ? item.hi - item.lo : item.hi - item.lo + wrap_span;
  for (int k = 0; k <= length; k += item.step) {
    int v = item.lo + k;
    if (v > fmax || (dow && item.hi < item.lo)) {
      v = fmin + (v - fmin) % wrap_span;
    }
    set(v);
  }
}

// The year field's bits, kept apart: most schedules name no year.
void CompileYears(const internal::Field& field, Schedule::Fields* f) {
  f->all_years =
      field.star() && field.items.size() == 1 && field.items[0].step == 1;
  if (f->all_years) return;  // the year bits are not consulted
  std::array<uint64_t, (kMaxYear - kMinYear) / 64 + 1> years = {};
  for (const Item& item : field.items) {
    ForEachInRange(item, kMinYear, kMaxYear, kMaxYear - kMinYear + 1, false,
                   [&](int v) {
                     const int i = v - kMinYear;
                     years[i / 64] |= uint64_t{1} << (i % 64);
                   });
  }
  f->years = std::make_shared<const decltype(years)>(years);
}

// Sets the bits of one field's items. The bits of ranges are gathered in a
// register and stored once (a read-modify-write of the field per value was
// most of a parse).
void Compile(const internal::Field& field, Schedule::Fields* f) {
  const FieldId id = field.id;
  if (id == FieldId::kYear) return CompileYears(field, f);
  const int fmin = internal::FieldMin(id);
  const int fmax = internal::FieldMax(id);
  const bool dow = id == FieldId::kDayOfWeek;
  const int wrap_span = dow ? 7 : fmax - fmin + 1;
  uint64_t bits = 0;  // bit v: value v (day-of-week: 0-7)
  for (const Item& item : field.items) {
    switch (item.kind) {
      case Item::Kind::kRange:
        if (item.step == 1 && item.hi >= item.lo) {
          // lo..hi, all of it: hi <= 59.
          bits |= (~uint64_t{0} >> (63 - item.hi)) & (~uint64_t{0} << item.lo);
        } else {
          ForEachInRange(item, fmin, fmax, wrap_span, dow,
                         [&](int v) { bits |= uint64_t{1} << v; });
        }
        break;
      case Item::Kind::kLastDay:
        f->dom_last_offset |= uint32_t{1} << item.n;
        break;
      case Item::Kind::kLastWeekday:
        f->dom_last_weekday = true;
        break;
      case Item::Kind::kNearestWeekday:
        f->dom_nearest |= uint32_t{1} << item.lo;
        break;
      case Item::Kind::kLastOfWeekday:
        f->dow_last |= static_cast<uint8_t>(1u << item.lo);
        break;
      case Item::Kind::kNthOfWeekday:
        f->dow_nth[item.n - 1] |= static_cast<uint8_t>(1u << item.lo);
        break;
    }
  }
  switch (id) {
    case FieldId::kSecond:
      f->seconds |= bits;
      break;
    case FieldId::kMinute:
      f->minutes |= bits;
      break;
    case FieldId::kHour:
      f->hours |= static_cast<uint32_t>(bits);
      break;
    case FieldId::kDayOfMonth:
      f->dom |= static_cast<uint32_t>(bits);
      f->dom_star = field.star();
      break;
    case FieldId::kMonth:
      f->months |= static_cast<uint16_t>(bits);
      break;
    case FieldId::kDayOfWeek:
      // 7 is Sunday, as 0.
      f->dow |= static_cast<uint8_t>((bits | bits >> 7) & 0x7F);
      f->dow_star = field.star();
      break;
    case FieldId::kYear:
      break;
  }
}

int64_t FloorToSecond(absl::Time t) { return absl::ToUnixSeconds(t); }

// The smallest whole second >= t.
int64_t CeilToSecond(absl::Time t) {
  const int64_t s = absl::ToUnixSeconds(t);
  return absl::FromUnixSeconds(s) == t ? s : s + 1;
}

}  // namespace

// Builds a Schedule from its parsed form. A friend of Schedule.
class Parser {
 public:
  static absl::StatusOr<Schedule> Build(absl::string_view expr,
                                        const ParseOptions& options) {
    internal::ParsedExpression parsed;
    RETURN_IF_ERROR(internal::ParseExpressionInto(expr, options, &parsed));
    Schedule s;
    s.text_ = absl::StrContains(expr, 'H')
                  ? absl::StrCat(expr, options.hash_key)
                  : std::string(expr);
    s.expression_size_ = static_cast<uint32_t>(expr.size());
    s.dialect_ = parsed.dialect;
    s.day_match_ = options.day_match;
    s.dst_ = options.dst;
    auto zone = ZoneTable::ForName(parsed.zone);
    if (!zone.ok()) {
      const size_t at = expr.find(parsed.zone);
      return absl::Status(
          zone.status().code(),
          parsed.zone.data() >= expr.data() &&
                  parsed.zone.data() < expr.data() + expr.size()
              ? absl::StrCat("time zone: ", zone.status().message(),
                             " (column ", at + 1, ")")
              : absl::StrCat("time zone: ", zone.status().message()));
    }
    s.zone_ = *zone;
    if (parsed.every_ms > 0) {
      s.every_ms_ = parsed.every_ms;
      s.every_anchor_ms_ = absl::ToUnixMillis(options.every_anchor);
      return s;
    }
    for (const internal::Field& field : parsed.fields)
      Compile(field, &s.fields_);
    const internal::Field& hour =
        parsed.fields[static_cast<int>(FieldId::kHour)];
    s.hour_wildcard_ = hour.star();
    const Schedule::Fields& f = s.fields_;
    constexpr uint32_t kAllDays = 0xFFFFFFFEu;  // bits 1-31
    const bool and_mode =
        f.dom_star || f.dow_star || s.day_match_ == DayMatch::kAll;
    const bool dow_full = f.dow == 0x7F && f.dow_last == 0 &&
                          f.dow_nth == std::array<uint8_t, 5>{};
    s.days_unrestricted_ = f.dom == kAllDays && f.dow == 0x7F;
    s.dom_only_ =
        and_mode && dow_full && f.dom_nearest == 0 && !f.dom_last_weekday;
    // "Only Feb 29" schedules (the day depends on the date alone, and no month
    // in the set has a matching day in a common year) let the search jump over
    // common years.
    if (s.dom_only_ && f.dom_last_offset == 0 && !s.days_unrestricted_) {
      bool common_year_day = false;
      for (int mo = 1; mo <= 12; ++mo) {
        const uint32_t valid =
            ((uint32_t{1} << time::DaysInMonth(2027, mo)) - 1) << 1;
        if (((f.months >> mo) & 1) && (f.dom & valid) != 0)
          common_year_day = true;
      }
      s.leap_years_only_ = !common_year_day;
    }
    // A schedule that never fires is an error.
    if (!s.matcher().AnyMatch()) {
      return absl::InvalidArgumentError(
          absl::StrCat("schedule \"", expr, "\" never fires: no date from ",
                       kMinYear, " to ", kMaxYear,
                       " matches its day-of-month, month, day-of-week and year "
                       "fields together"));
    }
    return s;
  }
};

internal::Matcher Schedule::matcher() const {
  return internal::Matcher{&fields_,
                           days_unrestricted_,
                           dom_only_,
                           day_match_ == DayMatch::kAll,
                           &internal::DowDays(fields_.dow),
                           leap_years_only_};
}

absl::StatusOr<Schedule> Schedule::Parse(absl::string_view expr,
                                         const ParseOptions& options) {
  return Parser::Build(expr, options);
}

const std::string& Schedule::zone_name() const { return zone_->name(); }

int64_t Schedule::NextAtOrAfter(int64_t from) const {
  const internal::Matcher m = matcher();
  const bool skip_repeats =
      !hour_wildcard_ && dst_.repeat == RepeatPolicy::kOnce;
  const bool fire_gaps =
      !hour_wildcard_ && dst_.gap == GapPolicy::kRunAtTransition;
  from = std::max(from, kFirstSearchSecond);
  while (from <= kLastSearchSecond) {
    const ZoneTable::Segment seg = zone_->Find(from);
    if (fire_gaps && from == seg.start && seg.prev_offset < seg.offset) {
      // Starting exactly at a spring-forward: the gap just before it fires
      // here, if it matches.
      time::CivilFields g = time::CivilFromSeconds(seg.start + seg.prev_offset);
      if (m.FindNext(&g) && time::SecondsFromCivil(g) < seg.start + seg.offset)
        return seg.start;
    }
    time::CivilFields c = time::CivilFromSeconds(from + seg.offset);
    if (c.year < kMinYear) c = {kMinYear, 1, 1, 0, 0, 0};
    if (!m.FindNext(&c)) return kNoTime;
    const int64_t wall = time::SecondsFromCivil(c);
    const int64_t t = wall - seg.offset;
    if (t < seg.end) {
      if (skip_repeats && seg.prev_offset > seg.offset &&
          wall < seg.start + seg.prev_offset) {
        from = seg.start +
               (seg.prev_offset - seg.offset);  // past the repeated wall times
        continue;
      }
      return t;
    }
    if (fire_gaps && seg.next_offset > seg.offset &&
        wall < seg.end + seg.next_offset) {
      return seg.end;
    }
    // No wall time in [wall(from), wall) matches. A fire before the one of
    // `wall` could only come from a wall time below wall(from), after a later
    // drop of the offset, so only within kMaxOffsetSwing of `from`. Past that,
    // the answer is `wall` in whichever segment holds it: try that directly,
    // and fall back to walking when it is a gap or a second pass.
    if (seg.end - from < kMaxOffsetSwing) {
      from = seg.end;
      continue;
    }
    const ZoneTable::Segment hit = zone_->Find(wall - seg.offset);
    const int64_t t2 = wall - hit.offset;
    if (t2 >= hit.start && t2 < hit.end && t2 >= seg.end &&
        !(hit.prev_offset > hit.offset && wall < hit.start + hit.prev_offset)) {
      return t2;
    }
    from = std::max(seg.end, wall - kMaxOffsetSwing);
  }
  return kNoTime;
}

int64_t Schedule::PrevAtOrBefore(int64_t to) const {
  const internal::Matcher m = matcher();
  const bool skip_repeats =
      !hour_wildcard_ && dst_.repeat == RepeatPolicy::kOnce;
  const bool fire_gaps =
      !hour_wildcard_ && dst_.gap == GapPolicy::kRunAtTransition;
  to = std::min(to, kLastSearchSecond);
  while (to >= kFirstSearchSecond) {
    const ZoneTable::Segment seg = zone_->Find(to);
    time::CivilFields c = time::CivilFromSeconds(to + seg.offset);
    if (c.year > kMaxYear) c = {kMaxYear, 12, 31, 23, 59, 59};
    if (!m.FindPrev(&c)) return kNoTime;
    const int64_t wall = time::SecondsFromCivil(c);
    const int64_t t = wall - seg.offset;
    if (t >= seg.start) {
      if (skip_repeats && seg.prev_offset > seg.offset &&
          wall < seg.start + seg.prev_offset) {
        to = seg.start -
             1;  // the first pass, in the previous segment, owns this wall time
        continue;
      }
      return t;
    }
    if (fire_gaps && seg.prev_offset < seg.offset &&
        wall >= seg.start + seg.prev_offset) {
      return seg.start;
    }
    // Mirror of the skip in NextAtOrAfter. The last occurrence of `wall` is the
    // answer unless it is a second pass that the policy suppresses, or falls in
    // a gap.
    if (to - seg.start < kMaxOffsetSwing) {
      to = seg.start - 1;
      continue;
    }
    const ZoneTable::Segment hit = zone_->Find(wall - seg.offset);
    const int64_t t2 = wall - hit.offset;
    if (t2 >= hit.start && t2 < hit.end && t2 < seg.start &&
        !(hit.prev_offset > hit.offset && wall < hit.start + hit.prev_offset) &&
        !(hit.next_offset < hit.offset && wall >= hit.end + hit.next_offset)) {
      return t2;
    }
    to = std::min(seg.start - 1, wall + kMaxOffsetSwing);
  }
  return kNoTime;
}

absl::Time Schedule::Next(absl::Time after) const {
  if (after == absl::InfiniteFuture()) return absl::InfiniteFuture();
  if (every_ms_ > 0) {
    // The first anchor + k * period strictly after `after`: k = floor((after -
    // anchor) / period)
    // + 1. IDivDuration truncates toward zero, so a negative remainder means
    // one less.
    const absl::Duration period = absl::Milliseconds(every_ms_);
    const absl::Time anchor = absl::FromUnixMillis(every_anchor_ms_);
    const absl::Time first = absl::FromUnixSeconds(kFirstCivilSecond);
    if (after < first) after = first - absl::Nanoseconds(1);
    absl::Duration rem;
    int64_t k = absl::IDivDuration(after - anchor, period, &rem);
    if (rem < absl::ZeroDuration()) --k;
    const absl::Time t = anchor + period * (k + 1);
    return t > absl::FromUnixSeconds(kLastCivilSecond) ? absl::InfiniteFuture()
                                                       : t;
  }
  const int64_t from = after == absl::InfinitePast() ? kFirstSearchSecond
                                                     : FloorToSecond(after) + 1;
  const int64_t t = NextAtOrAfter(from);
  return t == kNoTime ? absl::InfiniteFuture() : absl::FromUnixSeconds(t);
}

absl::Time Schedule::Prev(absl::Time before) const {
  if (before == absl::InfinitePast()) return absl::InfinitePast();
  if (every_ms_ > 0) {
    // The last anchor + k * period strictly before `before`: k = ceil((before -
    // anchor) / period) - 1.
    const absl::Duration period = absl::Milliseconds(every_ms_);
    const absl::Time anchor = absl::FromUnixMillis(every_anchor_ms_);
    const absl::Time last = absl::FromUnixSeconds(kLastCivilSecond);
    if (before > last) before = last + absl::Nanoseconds(1);
    absl::Duration rem;
    int64_t k = absl::IDivDuration(before - anchor, period, &rem);
    if (rem > absl::ZeroDuration()) ++k;
    const absl::Time t = anchor + period * (k - 1);
    return t < absl::FromUnixSeconds(kFirstCivilSecond) ? absl::InfinitePast()
                                                        : t;
  }
  const int64_t to = before == absl::InfiniteFuture()
                         ? kLastSearchSecond
                         : CeilToSecond(before) - 1;
  const int64_t t = PrevAtOrBefore(to);
  return t == kNoTime ? absl::InfinitePast() : absl::FromUnixSeconds(t);
}

std::vector<absl::Time> Schedule::NextN(absl::Time after, int n) const {
  std::vector<absl::Time> out;
  out.reserve(static_cast<size_t>(std::max(n, 0)));
  for (int i = 0; i < n; ++i) {
    after = Next(after);
    if (after == absl::InfiniteFuture()) break;
    out.push_back(after);
  }
  return out;
}

bool Schedule::Matches(absl::CivilSecond t) const {
  if (every_ms_ > 0) return false;
  if (t.year() < kMinYear || t.year() > kMaxYear) return false;
  const internal::Matcher m = matcher();
  const Fields& f = fields_;
  if (!m.YearMatches(static_cast<int>(t.year()))) return false;
  if (!((f.months >> t.month()) & 1)) return false;
  if (!((m.DayMask(static_cast<int>(t.year()), t.month()) >> t.day()) & 1))
    return false;
  return ((f.hours >> t.hour()) & 1) && ((f.minutes >> t.minute()) & 1) &&
         ((f.seconds >> t.second()) & 1);
}

std::vector<OffsetChange> Schedule::OffsetChangesBetween(absl::Time from,
                                                         absl::Time to) const {
  std::vector<OffsetChange> out;
  if (to <= from) return out;
  int64_t t = FloorToSecond(from) + 1;
  const int64_t end = std::min(FloorToSecond(to), kLastSearchSecond);
  while (t <= end) {
    const ZoneTable::Segment seg = zone_->Find(t);
    if (seg.end > end) break;
    out.push_back({absl::FromUnixSeconds(seg.end), absl::Seconds(seg.offset),
                   absl::Seconds(seg.next_offset)});
    t = seg.end;
  }
  return out;
}

}  // namespace chime::cron
