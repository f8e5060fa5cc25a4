// Property tests of Schedule (Next, Prev, Matches, Parse) against the rules of
// include/chime/cron.h and against ReferenceCron (reference_cron.h), a slow
// model that shares no code with src/cron.
//
// Every property draws a Case: an expression of random field items in 5, 6 or 7
// fields (sometimes in the Quartz dialect, sometimes with a CRON_TZ= prefix),
// one of seven zones (UTC; Kolkata, a half-hour offset without DST; New York
// and Berlin; Lord Howe, whose DST shift is 30 minutes; Chatham at +12:45; Sao
// Paulo, whose DST ended in 2019 and changed at midnight), a DST policy, a
// DayMatch, and a start instant: uniform over 1970-2399, within seconds to days
// of one of the zone's transitions in 2026/2027 (2016-2019 for Sao Paulo), or
// near the ends of the range.
//
// Brute-force checks walk at most kSecondWindow (schedules with a seconds
// field) or kMinuteWindow (second field `0`, walked a minute at a time) from
// the start, at most ~90,000 steps, so a case costs well under a second even
// under AddressSanitizer; when Next(t) lies further away they check that
// nothing fires within the window. Answers years away are checked day by day
// (NoMatchingDayIsSkippedOnTheWayToNextOrPrev).
//
// A failure prints the shrunk Case and a `reproduce` string: rerun with
// RC_PARAMS="reproduce=..." to replay it.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "chime/cron.h"
#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "rapidcheck/gtest.h"
#include "src/cron/reference_cron.h"

namespace chime::cron {
namespace {

using reference::ReferenceCron;
using reference::ReferenceOptions;

constexpr absl::Duration kSecondWindow = absl::Hours(24);
constexpr absl::Duration kMinuteWindow = absl::Hours(31 * 24);

const std::vector<std::string>& ZoneNames() {
  static const auto* zones = new std::vector<std::string>{"UTC",
                                                          "America/New_York",
                                                          "Europe/Berlin",
                                                          "Australia/Lord_Howe",
                                                          "Pacific/Chatham",
                                                          "Asia/Kolkata",
                                                          "America/Sao_Paulo"};
  return *zones;
}

absl::TimeZone LoadZone(const std::string& name) {
  absl::TimeZone zone;
  if (!absl::LoadTimeZone(name, &zone)) {
    ADD_FAILURE() << "tzdata has no " << name;
  }
  return zone;
}

absl::Time Utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  return absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s),
                         absl::UTCTimeZone());
}

std::string Format(absl::Time t, const absl::TimeZone& zone) {
  if (t == absl::InfiniteFuture()) return "infinite-future";
  if (t == absl::InfinitePast()) return "infinite-past";
  return absl::StrCat(
      absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ", t, absl::UTCTimeZone()), " (",
      absl::FormatTime("%Y-%m-%d %H:%M:%E*S %z", t, zone), ")");
}

// The instants at which `zone` changes its offset in [from_year, to_year),
// found with absl.
std::vector<absl::Time> Transitions(const absl::TimeZone& zone, int from_year,
                                    int to_year) {
  std::vector<absl::Time> out;
  absl::Time t = Utc(from_year, 1, 1);
  const absl::Time end = Utc(to_year, 1, 1);
  absl::TimeZone::CivilTransition transition;
  while (zone.NextTransition(t, &transition)) {
    const absl::Time at = zone.At(transition.to).trans;
    if (at >= end || at <= t) break;
    out.push_back(at);
    t = at;
  }
  return out;
}

// Transitions to start near: 2026/2027, or Sao Paulo's last ones (2016-2019).
const std::vector<absl::Time>& NearbyTransitions(const std::string& zone_name) {
  static const auto* table = [] {
    auto* t = new std::vector<std::vector<absl::Time>>;
    for (const std::string& name : ZoneNames()) {
      const absl::TimeZone zone = LoadZone(name);
      std::vector<absl::Time> list = Transitions(zone, 2026, 2028);
      if (list.empty()) list = Transitions(zone, 2016, 2020);
      t->push_back(list);
    }
    return t;
  }();
  const auto it = std::find(ZoneNames().begin(), ZoneNames().end(), zone_name);
  return (*table)[it - ZoneNames().begin()];
}

// ----- Generated cases -----

struct Case {
  std::string expr;  // as passed to Parse, including any CRON_TZ= prefix
  Dialect dialect = Dialect::kAuto;
  DayMatch day_match = DayMatch::kAny;
  DstPolicy dst;
  std::string options_zone;  // ParseOptions::zone
  std::string zone;  // the zone in effect: the prefix's, else options_zone
  absl::Time start;
};

const char* DialectName(Dialect d) {
  switch (d) {
    case Dialect::kAuto:
      return "kAuto";
    case Dialect::kVixie:
      return "kVixie";
    case Dialect::kSeconds:
      return "kSeconds";
    case Dialect::kQuartz:
      return "kQuartz";
  }
  return "?";
}

void showValue(const Case& c, std::ostream& os) {
  os << "{expr: \"" << c.expr << "\", dialect: " << DialectName(c.dialect)
     << ", day_match: " << (c.day_match == DayMatch::kAll ? "kAll" : "kAny")
     << ", gap: "
     << (c.dst.gap == GapPolicy::kSkip ? "kSkip" : "kRunAtTransition")
     << ", repeat: "
     << (c.dst.repeat == RepeatPolicy::kTwice ? "kTwice" : "kOnce")
     << ", options.zone: " << c.options_zone << ", zone: " << c.zone
     << ", start: " << Format(c.start, LoadZone(c.zone)) << "}";
}

// How to write one field's values: numbers lo..hi, or names[v - name_base].
struct FieldSpec {
  int lo;
  int hi;
  bool cyclic;         // ranges may wrap (b < a)
  rc::Gen<int> value;  // a value in lo..hi, biased towards interesting ones
  int max_step;        // steps 1..max_step are accepted
  std::vector<std::string> names = {};
  int name_base = 0;
};

rc::Gen<std::string> GenWritten(const FieldSpec& f, int v) {
  const int i = v - f.name_base;
  if (f.names.empty() || i < 0 || i >= static_cast<int>(f.names.size())) {
    return rc::gen::just(std::to_string(v));
  }
  const std::string upper = f.names[i];
  const std::string lower = absl::AsciiStrToLower(upper);
  const std::string capital = upper.substr(0, 1) + lower.substr(1);
  return rc::gen::element(std::to_string(v), std::to_string(v), upper, lower,
                          capital);
}

rc::Gen<int> GenStep(const FieldSpec& f) {
  return rc::gen::weightedOneOf<int>(
      {{3, rc::gen::inRange(1, std::min(f.max_step, 7) + 1)},
       {1, rc::gen::inRange(1, f.max_step + 1)}});
}

// `a`, `a-b`, `a-b/s`, `a/s` or `*/s`.
rc::Gen<std::string> GenRangeItem(const FieldSpec& f) {
  return rc::gen::exec([f] {
    // 0: `a`, 1: `a-b`, 2: `a-b/s`, 3: `a/s`, 4: `*/s`.
    const int kind = *rc::gen::weightedElement<int>(
        {{4, 0}, {3, 1}, {2, 2}, {1, 3}, {2, 4}});
    const int a = *f.value;
    switch (kind) {
      case 0:
        return *GenWritten(f, a);
      case 1:
      case 2: {
        const int b = f.cyclic ? *f.value : *rc::gen::inRange(a, f.hi + 1);
        std::string item = *GenWritten(f, a) + "-" + *GenWritten(f, b);
        if (kind == 2) item += "/" + std::to_string(*GenStep(f));
        return item;
      }
      case 3:
        return std::to_string(a) + "/" + std::to_string(*GenStep(f));
      default:
        return "*/" + std::to_string(*GenStep(f));
    }
  });
}

// One to three items, comma-separated.
rc::Gen<std::string> GenList(rc::Gen<std::string> item) {
  return rc::gen::exec([item] {
    std::vector<std::string> items(*rc::gen::inRange(1, 4));
    for (std::string& i : items) i = *item;
    return absl::StrJoin(items, ",");
  });
}

// `*` (weight `star` against 4), else a list of range items.
rc::Gen<std::string> GenPlainField(const FieldSpec& f, int star) {
  return rc::gen::weightedOneOf<std::string>(
      {{star, rc::gen::just(std::string("*"))}, {4, GenList(GenRangeItem(f))}});
}

FieldSpec SecondOrMinute() {
  return {.lo = 0,
          .hi = 59,
          .cyclic = true,
          .value = rc::gen::weightedOneOf<int>(
              {{3, rc::gen::inRange(0, 60)},
               {1, rc::gen::element(0, 15, 30, 45, 59)}}),
          .max_step = 60};
}

FieldSpec Hour() {
  // Daylight-saving changes happen between 23:00 and 04:00 in the zones above.
  return {.lo = 0,
          .hi = 23,
          .cyclic = true,
          .value = rc::gen::weightedOneOf<int>({{2, rc::gen::inRange(0, 24)},
                                                {3, rc::gen::inRange(0, 5)},
                                                {1, rc::gen::just(23)}}),
          .max_step = 24};
}

FieldSpec Month() {
  return {.lo = 1,
          .hi = 12,
          .cyclic = true,
          .value = rc::gen::inRange(1, 13),
          .max_step = 12,
          .names = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG",
                    "SEP", "OCT", "NOV", "DEC"},
          .name_base = 1};
}

FieldSpec DayOfMonth() {
  return {.lo = 1,
          .hi = 31,
          .cyclic = false,
          .value = rc::gen::weightedOneOf<int>(
              {{3, rc::gen::inRange(1, 29)}, {1, rc::gen::inRange(29, 32)}}),
          .max_step = 31};
}

FieldSpec DayOfWeek(bool quartz) {
  // Written 0-7 (Vixie) or 1-7 (Quartz); a name stands for its day's number.
  const int sunday = quartz ? 1 : 0;
  return {.lo = sunday,
          .hi = 7,
          .cyclic = true,
          .value = rc::gen::inRange(sunday, 8),
          .max_step = 7,
          .names = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"},
          .name_base = sunday};
}

// Years near `around`, so that a 7-field schedule often fires near the start,
// or anywhere in the range.
FieldSpec Year(int around) {
  return {.lo = kMinYear,
          .hi = kMaxYear,
          .cyclic = false,
          .value = rc::gen::weightedOneOf<int>(
              {{3, rc::gen::inRange(std::max(kMinYear, around - 1),
                                    std::min(kMaxYear, around + 3) + 1)},
               {1, rc::gen::inRange(kMinYear, kMaxYear + 1)}}),
          .max_step = kMaxYear - kMinYear + 1};
}

rc::Gen<std::string> GenDayOfMonthField() {
  const FieldSpec f = DayOfMonth();
  const rc::Gen<std::string> item = rc::gen::weightedOneOf<std::string>({
      {4, GenRangeItem(f)},
      {1, rc::gen::just(std::string("L"))},
      // L-n: one of the last days, any n, or the 1st of some month.
      {2, rc::gen::map(
              rc::gen::weightedOneOf<int>({{2, rc::gen::inRange(0, 4)},
                                           {1, rc::gen::inRange(0, 31)},
                                           {2, rc::gen::inRange(26, 31)}}),
              [](int n) { return absl::StrCat("L-", n); })},
      {1, rc::gen::just(std::string("LW"))},
      {2, rc::gen::map(f.value, [](int d) { return absl::StrCat(d, "W"); })},
  });
  return rc::gen::weightedOneOf<std::string>(
      {{4, rc::gen::just(std::string("*"))},
       {1, rc::gen::just(std::string("?"))},
       {5, GenList(item)}});
}

rc::Gen<std::string> GenDayOfWeekField(bool quartz) {
  const FieldSpec f = DayOfWeek(quartz);
  const rc::Gen<std::string> item = rc::gen::weightedOneOf<std::string>({
      {4, GenRangeItem(f)},
      {1, rc::gen::exec([f] { return *GenWritten(f, *f.value) + "L"; })},
      {1, rc::gen::exec([f] {
         return *GenWritten(f, *f.value) + "#" +
                std::to_string(*rc::gen::inRange(1, 6));
       })},
  });
  return rc::gen::weightedOneOf<std::string>(
      {{4, rc::gen::just(std::string("*"))},
       {1, rc::gen::just(std::string("?"))},
       {5, GenList(item)}});
}

// A start anywhere in 1970-2399, or within days of either end.
rc::Gen<absl::Time> GenStartAnywhere() {
  const int64_t first = absl::ToUnixSeconds(Utc(kMinYear, 1, 1));
  const int64_t last = absl::ToUnixSeconds(Utc(kMaxYear, 12, 31, 23, 59, 59));
  return rc::gen::weightedOneOf<absl::Time>(
      {{8, rc::gen::map(rc::gen::inRange<int64_t>(first, last + 1),
                        [](int64_t s) { return absl::FromUnixSeconds(s); })},
       {1, rc::gen::exec([first, last] {
          const int64_t edge = *rc::gen::element(first, last);
          return absl::FromUnixSeconds(
              edge + *rc::gen::inRange<int64_t>(-3 * 86400, 3 * 86400));
        })}});
}

// How far from a transition to start: the last and first seconds around it,
// hours, days.
rc::Gen<absl::Duration> GenOffsetFromTransition() {
  return rc::gen::map(
      rc::gen::weightedOneOf<int64_t>(
          {{3, rc::gen::inRange<int64_t>(-3, 4)},
           {3, rc::gen::inRange<int64_t>(-7200, 7201)},
           {2, rc::gen::inRange<int64_t>(-3 * 86400, 3 * 86400)}}),
      [](int64_t s) { return absl::Seconds(s); });
}

// Mostly whole seconds.
rc::Gen<absl::Duration> GenFraction() {
  return rc::gen::element(absl::ZeroDuration(), absl::ZeroDuration(),
                          absl::ZeroDuration(), absl::Nanoseconds(1),
                          absl::Milliseconds(500),
                          absl::Nanoseconds(999999999));
}

// Hour and minute fields naming the wall times around `first` and `last`
// (the edges of a transition's skipped or repeated range), or other minutes.
std::pair<rc::Gen<std::string>, rc::Gen<std::string>> GenFieldsAround(
    absl::CivilSecond first, absl::CivilSecond last) {
  FieldSpec hour = Hour();
  hour.value =
      rc::gen::element(first.hour(), last.hour(), (first.hour() + 23) % 24,
                       (last.hour() + 1) % 24);
  FieldSpec minute = SecondOrMinute();
  minute.value = rc::gen::weightedOneOf<int>(
      {{1, rc::gen::element(first.minute(), last.minute())},
       {1, SecondOrMinute().value}});
  return {GenPlainField(hour, 1), GenPlainField(minute, 1)};
}

// Which cases to draw.
enum class Focus {
  kAnything,
  // Zones with transitions, starts within two hours of one, hours that it
  // skips or repeats, most days matching: the daylight-saving rules at work.
  kDaylightSaving,
};

// The properties share rapidcheck's seed; each passes its own `salt` so that
// they see different cases.
rc::Gen<Case> GenCase(int salt, Focus focus = Focus::kAnything) {
  return rc::gen::exec([salt, focus] {
    for (int i = 0; i < salt; ++i) *rc::gen::just(0);
    const bool dst = focus == Focus::kDaylightSaving;
    Case c;
    c.zone = *rc::gen::elementOf(ZoneNames());
    while (dst && NearbyTransitions(c.zone).empty()) {
      c.zone = *rc::gen::elementOf(ZoneNames());
    }
    // Without a focus, half the cases start near one of the zone's
    // transitions, mostly with wall times at its edges.
    const std::vector<absl::Time>& transitions = NearbyTransitions(c.zone);
    const bool near_transition =
        dst || (!transitions.empty() && *rc::gen::element(false, true));
    std::string minute_field, hour_field;
    bool every_day = false;
    // Sometimes the schedule is one wall time a day, at an edge of the range
    // that the transition skips or repeats.
    std::optional<absl::CivilSecond> edge;
    if (near_transition) {
      const absl::Time t = *rc::gen::elementOf(transitions);
      const absl::Duration offset =
          // The focus is on the seconds either side of the transition.
          dst ? absl::Seconds(*rc::gen::weightedOneOf<int64_t>(
                    {{2, rc::gen::inRange<int64_t>(-2, 3)},
                     {1, rc::gen::inRange<int64_t>(-7200, 7201)}}))
              : *GenOffsetFromTransition();
      c.start = t + offset + *GenFraction();
      // Spring forward: [first, last) is skipped. Fall back: [last, first)
      // is repeated.
      const absl::TimeZone zone = LoadZone(c.zone);
      const absl::CivilSecond first = zone.At(t - absl::Seconds(1)).cs + 1;
      const absl::CivilSecond last = zone.At(t).cs;
      const auto [hours, minutes] = GenFieldsAround(first, last);
      hour_field = *rc::gen::weightedOneOf<std::string>(
          {{3, hours}, {1, GenPlainField(Hour(), 3)}});
      minute_field = *rc::gen::weightedOneOf<std::string>(
          {{3, minutes}, {1, GenPlainField(SecondOrMinute(), 2)}});
      every_day = dst ? *rc::gen::weightedElement<bool>({{1, false}, {3, true}})
                      : *rc::gen::element(false, true);
      if (*rc::gen::weightedElement<bool>(
              {{2, false}, {dst ? 2u : 1u, true}})) {
        edge = *rc::gen::element(first - 1, first, last - 1, last);
      }
    } else {
      c.start = *GenStartAnywhere() + *GenFraction();
      hour_field = *GenPlainField(Hour(), 3);
      minute_field = *GenPlainField(SecondOrMinute(), 2);
    }
    const int start_year = static_cast<int>(
        absl::ToCivilYear(c.start, absl::UTCTimeZone()).year());
    const int count = *rc::gen::element(5, 6, 7);
    c.dialect = count == 5
                    ? *rc::gen::element(Dialect::kAuto, Dialect::kVixie)
                    : *rc::gen::element(Dialect::kAuto, Dialect::kSeconds,
                                        Dialect::kQuartz);
    const bool quartz = c.dialect == Dialect::kQuartz;
    std::vector<std::string> fields;
    if (count >= 6) {
      fields.push_back(*rc::gen::weightedOneOf<std::string>(
          {{5, rc::gen::just(std::string("0"))},
           {4, GenPlainField(SecondOrMinute(), 1)}}));
    }
    fields.push_back(minute_field);
    fields.push_back(hour_field);
    // Now and then a rare date (Feb 29, a Friday the 13th, a fifth Monday in
    // February), so that Next and Prev have years to search.
    const bool rare =
        !every_day && *rc::gen::weightedElement<bool>({{4, false}, {1, true}});
    if (every_day) {
      fields.insert(fields.end(), {"*", "*", "*"});
    } else if (rare) {
      fields.push_back(*rc::gen::element<std::string>(
          "29", "30", "31", "13", "L", "LW", "29W", "L-2", "1"));
      fields.push_back(
          *rc::gen::element<std::string>("2", "FEB", "2,11", "4-6", "*"));
      fields.push_back(*rc::gen::element<std::string>(
          "*", "?", quartz ? "2" : "1", quartz ? "6" : "5", "MON#5", "SUN#5",
          quartz ? "1L" : "0L", "WED#4"));
    } else {
      fields.push_back(*GenDayOfMonthField());
      fields.push_back(*GenPlainField(Month(), 12));
      fields.push_back(*GenDayOfWeekField(quartz));
    }
    if (count == 7) fields.push_back(*GenPlainField(Year(start_year), 4));
    if (edge.has_value()) {
      // (A 5-field schedule fires at second 0 of the edge's minute.)
      fields = {std::to_string(edge->minute()), std::to_string(edge->hour()),
                "*", "*", "*"};
      if (count >= 6)
        fields.insert(fields.begin(), std::to_string(edge->second()));
      if (count == 7) fields.push_back("*");
    }
    c.day_match =
        rare ? *rc::gen::element(DayMatch::kAll, DayMatch::kAll, DayMatch::kAny)
             : *rc::gen::element(DayMatch::kAny, DayMatch::kAll);
    c.dst.gap = *rc::gen::weightedElement<GapPolicy>(
        {{dst ? 2u : 1u, GapPolicy::kRunAtTransition}, {1, GapPolicy::kSkip}});
    c.dst.repeat = *rc::gen::element(RepeatPolicy::kOnce, RepeatPolicy::kTwice);
    const bool prefix =
        *rc::gen::weightedElement<bool>({{5, false}, {1, true}});
    c.options_zone = prefix ? *rc::gen::elementOf(ZoneNames()) : c.zone;
    c.expr = absl::StrCat(prefix ? absl::StrCat("CRON_TZ=", c.zone, " ") : "",
                          absl::StrJoin(fields, " "));
    return c;
  });
}

// ----- Helpers shared by the properties -----

ParseOptions OptionsFor(const Case& c) {
  ParseOptions o;
  o.dialect = c.dialect;
  o.day_match = c.day_match;
  o.zone = c.options_zone;
  o.dst = c.dst;
  return o;
}

// The case's schedule. Discards the case if Parse says it never fires; any
// other error fails (the generator writes valid syntax only).
Schedule MustParse(const Case& c) {
  absl::StatusOr<Schedule> s = Schedule::Parse(c.expr, OptionsFor(c));
  if (!s.ok()) {
    RC_LOG() << "Parse: " << s.status() << "\n";
    RC_ASSERT(absl::StrContains(s.status().message(), "never fires"));
    RC_DISCARD("never fires");
  }
  return *std::move(s);
}

ReferenceCron MustParseReference(const Case& c) {
  ReferenceOptions o;
  o.zone = c.options_zone;
  o.quartz = c.dialect == Dialect::kQuartz;
  o.day_match_all = c.day_match == DayMatch::kAll;
  o.skip_gaps = c.dst.gap == GapPolicy::kSkip;
  o.repeat_twice = c.dst.repeat == RepeatPolicy::kTwice;
  std::string error;
  std::optional<ReferenceCron> r = ReferenceCron::Parse(c.expr, o, &error);
  if (!r.has_value()) {
    RC_FAIL("the reference cannot read " + c.expr + ": " + error);
  }
  return *std::move(r);
}

// One minute when only second 0 matches (every zone here has whole-minute
// offsets), else 1 s.
absl::Duration StepOf(const Schedule& s) {
  return s.fields().seconds == 1 ? absl::Minutes(1) : absl::Seconds(1);
}

absl::Duration WindowOf(const Schedule& s) {
  return StepOf(s) == absl::Minutes(1) ? kMinuteWindow : kSecondWindow;
}

// `t` if it is within `window` of `start`, the answer the reference's walk
// can find; else nullopt.
std::optional<absl::Time> InWindow(absl::Time t, absl::Time start,
                                   absl::Duration window) {
  if (absl::AbsDuration(t - start) > window) return std::nullopt;
  return t;
}

// The first instant after `t` that is a whole multiple of `step`.
absl::Time FirstCandidateAfter(absl::Time t, absl::Duration step) {
  const int64_t n = absl::ToInt64Seconds(step);
  int64_t s = absl::ToUnixSeconds(t) + 1;  // rounds down, so this is after t
  while (s % n != 0) ++s;
  return absl::FromUnixSeconds(s);
}

// Whether instant t is the later of the two instants of a repeated wall time.
bool IsSecondPass(const absl::TimeZone& zone, absl::Time t) {
  const absl::TimeZone::TimeInfo info = zone.At(zone.At(t).cs);
  return info.kind == absl::TimeZone::TimeInfo::REPEATED &&
         t == std::max(info.pre, info.post);
}

// Whether `s` must fire at the whole-second instant `t`, by the documented
// rules applied to the engine's own Matches(): a matching wall time fires
// unless it is the second pass of a repeated hour for a fixed-hour schedule
// with kOnce; a spring-forward transition fires for a fixed-hour schedule with
// kRunAtTransition when a skipped wall time matches.
bool MustFireAt(const Schedule& s, const absl::TimeZone& zone, absl::Time t) {
  const bool fixed_hours = !s.hour_is_wildcard();
  const absl::TimeZone::CivilInfo now = zone.At(t);
  if (s.Matches(now.cs) &&
      !(fixed_hours && s.dst_policy().repeat == RepeatPolicy::kOnce &&
        IsSecondPass(zone, t))) {
    return true;
  }
  if (!fixed_hours || s.dst_policy().gap == GapPolicy::kSkip) return false;
  const absl::TimeZone::CivilInfo before = zone.At(t - absl::Seconds(1));
  if (now.offset <= before.offset) return false;
  for (absl::CivilSecond w = before.cs + 1; w < now.cs; ++w) {
    if (s.Matches(w)) return true;
  }
  return false;
}

std::string Bucket(absl::Duration d) {
  if (d == absl::InfiniteDuration()) return "none";
  if (d <= absl::Minutes(1)) return "<=1m";
  if (d <= absl::Hours(1)) return "<=1h";
  if (d <= absl::Hours(24)) return "<=1d";
  if (d <= kMinuteWindow) return "<=31d";
  return ">31d";
}

void Classify(const Case& c, const Schedule& s, absl::Duration distance) {
  RC_TAG(NearbyTransitions(c.zone).empty() ? "zone without DST" : "DST zone",
         s.hour_is_wildcard() ? "wildcard hour" : "fixed hours",
         Bucket(distance));
}

// ----- Properties -----

RC_GTEST_PROP(CronProperty, NextIsStrictlyAfterAndPrevStrictlyBefore, ()) {
  const Case c = *GenCase(1);
  const Schedule s = MustParse(c);
  const absl::Time next = s.Next(c.start);
  const absl::Time prev = s.Prev(c.start);
  RC_LOG() << "Next: " << next << ", Prev: " << prev << "\n";
  RC_ASSERT(next > c.start);
  RC_ASSERT(prev < c.start);
  // Fire times are whole seconds.
  if (next != absl::InfiniteFuture()) {
    RC_ASSERT(absl::FromUnixSeconds(absl::ToUnixSeconds(next)) == next);
  }
  if (prev != absl::InfinitePast()) {
    RC_ASSERT(absl::FromUnixSeconds(absl::ToUnixSeconds(prev)) == prev);
  }
  RC_CLASSIFY(next == absl::InfiniteFuture(), "no next");
  RC_CLASSIFY(prev == absl::InfinitePast(), "no prev");
}

RC_GTEST_PROP(CronProperty, NextAndPrevAreFireTimesByMatches, ()) {
  const Case c = *GenCase(2);
  const Schedule s = MustParse(c);
  const absl::TimeZone zone = LoadZone(c.zone);
  for (const absl::Time t : {s.Next(c.start), s.Prev(c.start)}) {
    if (t == absl::InfiniteFuture() || t == absl::InfinitePast()) continue;
    RC_LOG() << "fire time " << Format(t, zone) << "\n";
    RC_ASSERT(MustFireAt(s, zone, t));
    RC_CLASSIFY(!s.Matches(zone.At(t).cs), "fired at a gap transition");
    RC_CLASSIFY(IsSecondPass(zone, t), "fired in a second pass");
  }
}

RC_GTEST_PROP(CronProperty, NothingFiresStrictlyBetweenAnInstantAndItsNext,
              ()) {
  const Case c = *GenCase(3);
  const Schedule s = MustParse(c);
  const absl::TimeZone zone = LoadZone(c.zone);
  const absl::Time next = s.Next(c.start);
  Classify(c, s, next - c.start);
  const absl::Time end = std::min(next, c.start + WindowOf(s));
  for (absl::Time t = FirstCandidateAfter(c.start, StepOf(s)); t < end;
       t += StepOf(s)) {
    if (MustFireAt(s, zone, t)) {
      RC_FAIL(absl::StrCat("fires at ", Format(t, zone),
                           " before Next() = ", Format(next, zone)));
    }
  }
}

RC_GTEST_PROP(CronProperty, PrevAndNextUndoEachOther, ()) {
  const Case c = *GenCase(4);
  const Schedule s = MustParse(c);
  const absl::Time next = s.Next(c.start);
  if (next != absl::InfiniteFuture()) {
    const absl::Time back = s.Prev(next);
    RC_LOG() << "Next: " << next << ", Prev(Next): " << back << "\n";
    RC_ASSERT(back <= c.start);
    if (back != absl::InfinitePast()) RC_ASSERT(s.Next(back) == next);
  }
  const absl::Time prev = s.Prev(c.start);
  if (prev != absl::InfinitePast()) {
    const absl::Time forth = s.Next(prev);
    RC_LOG() << "Prev: " << prev << ", Next(Prev): " << forth << "\n";
    RC_ASSERT(forth >= c.start);
    if (forth != absl::InfiniteFuture()) RC_ASSERT(s.Prev(forth) == prev);
  }
}

RC_GTEST_PROP(CronProperty, NextAgreesWithTheReference, ()) {
  const Case c = *GenCase(5);
  const Schedule s = MustParse(c);
  const ReferenceCron r = MustParseReference(c);
  const absl::Time next = s.Next(c.start);
  Classify(c, s, next - c.start);
  const absl::Duration window = WindowOf(s);
  const std::optional<absl::Time> expected = r.NextWithin(c.start, window);
  RC_LOG() << "Next: " << Format(next, r.zone()) << ", reference: "
           << (expected ? Format(*expected, r.zone())
                        : "none within the window")
           << "\n";
  RC_CLASSIFY(expected && !r.MatchesWall(r.zone().At(*expected).cs),
              "fires at a gap transition");
  RC_ASSERT(expected == InWindow(next, c.start, window));
}

RC_GTEST_PROP(CronProperty, PrevAgreesWithTheReference, ()) {
  const Case c = *GenCase(6);
  const Schedule s = MustParse(c);
  const ReferenceCron r = MustParseReference(c);
  const absl::Time prev = s.Prev(c.start);
  Classify(c, s, c.start - prev);
  const absl::Duration window = WindowOf(s);
  const std::optional<absl::Time> expected = r.PrevWithin(c.start, window);
  RC_LOG() << "Prev: " << Format(prev, r.zone()) << ", reference: "
           << (expected ? Format(*expected, r.zone())
                        : "none within the window")
           << "\n";
  RC_CLASSIFY(expected && !r.MatchesWall(r.zone().At(*expected).cs),
              "fires at a gap transition");
  RC_ASSERT(expected == InWindow(prev, c.start, window));
}

// Next and Prev around daylight-saving transitions, where fixed hours fire at
// the transition, once, twice or not at all.
RC_GTEST_PROP(CronProperty, AroundTransitionsNextAndPrevAgreeWithTheReference,
              ()) {
  const Case c = *GenCase(/*salt=*/0, Focus::kDaylightSaving);
  const Schedule s = MustParse(c);
  const ReferenceCron r = MustParseReference(c);
  const absl::Duration window = WindowOf(s);
  const absl::Time next = s.Next(c.start);
  const absl::Time prev = s.Prev(c.start);
  const std::optional<absl::Time> expected_next = r.NextWithin(c.start, window);
  const std::optional<absl::Time> expected_prev = r.PrevWithin(c.start, window);
  RC_LOG() << "Next: " << Format(next, r.zone()) << ", reference: "
           << (expected_next ? Format(*expected_next, r.zone()) : "none")
           << "\nPrev: " << Format(prev, r.zone()) << ", reference: "
           << (expected_prev ? Format(*expected_prev, r.zone()) : "none")
           << "\n";
  RC_ASSERT(expected_next == InWindow(next, c.start, window));
  RC_ASSERT(expected_prev == InWindow(prev, c.start, window));
  for (const std::optional<absl::Time>& t : {expected_next, expected_prev}) {
    if (!t.has_value()) continue;
    const absl::CivilSecond wall = r.zone().At(*t).cs;
    RC_CLASSIFY(!r.MatchesWall(wall), "fires at a gap transition");
    RC_CLASSIFY(r.MatchesWall(wall) && IsSecondPass(r.zone(), *t),
                "fires in a second pass");
  }
  RC_TAG(s.hour_is_wildcard() ? "wildcard hour" : "fixed hours");
}

// Day-of-month, day-of-week and month logic over four years: every day, at the
// time of day of Next() (which matches the time fields) and at the start's time
// of day.
RC_GTEST_PROP(CronProperty, MatchesAgreesWithTheReferenceDayByDay, ()) {
  const Case c = *GenCase(7);
  const Schedule s = MustParse(c);
  const ReferenceCron r = MustParseReference(c);
  std::vector<absl::CivilSecond> times_of_day = {r.zone().At(c.start).cs};
  const absl::Time next = s.Next(c.start);
  if (next != absl::InfiniteFuture()) {
    times_of_day.push_back(r.zone().At(next).cs);
  }
  const absl::CivilDay first(r.zone().At(c.start).cs);
  for (const absl::CivilSecond tod : times_of_day) {
    for (absl::CivilDay d = first; d < first + 4 * 366; ++d) {
      const absl::CivilSecond w(d.year(), d.month(), d.day(), tod.hour(),
                                tod.minute(), tod.second());
      if (s.Matches(w) != r.MatchesWall(w)) {
        RC_FAIL(absl::StrCat("Matches(", absl::FormatCivilTime(w), ") = ",
                             s.Matches(w), ", reference: ", r.MatchesWall(w)));
      }
    }
  }
}

// Whether `zone` changes its offset within a day of date `d`.
bool NearOffsetChange(const absl::TimeZone& zone, absl::CivilDay d) {
  absl::TimeZone::CivilTransition transition;
  const absl::Time from = absl::FromCivil(d - 1, zone);
  return zone.NextTransition(from, &transition) &&
         zone.At(transition.to).trans < absl::FromCivil(d + 2, zone);
}

// For answers years away, where the reference's walk would be too slow: every
// date strictly between the start's and Next()'s (or Prev()'s) that matches the
// day, month and year fields must be near a daylight-saving change -- on any
// other day the first matching wall time occurs exactly once, and fires.
RC_GTEST_PROP(CronProperty, NoMatchingDayIsSkippedOnTheWayToNextOrPrev, ()) {
  const Case c = *GenCase(8);
  const Schedule s = MustParse(c);
  const ReferenceCron r = MustParseReference(c);
  const absl::TimeZone& zone = r.zone();
  constexpr int kMaxDays = 50 * 366;
  const absl::CivilDay start_day(zone.At(c.start).cs);
  const absl::Time next = s.Next(c.start);
  const absl::Time prev = s.Prev(c.start);
  Classify(c, s, next - c.start);
  const absl::CivilDay next_day = next == absl::InfiniteFuture()
                                      ? absl::CivilDay(kMaxYear + 1, 1, 1)
                                      : absl::CivilDay(zone.At(next).cs);
  const absl::CivilDay prev_day = prev == absl::InfinitePast()
                                      ? absl::CivilDay(kMinYear - 1, 12, 31)
                                      : absl::CivilDay(zone.At(prev).cs);
  RC_LOG() << "Next: " << Format(next, zone) << ", Prev: " << Format(prev, zone)
           << "\n";
  for (absl::CivilDay d = start_day + 1;
       d < next_day && d - start_day <= kMaxDays; ++d) {
    if (r.MatchesDay(d) && !NearOffsetChange(zone, d)) {
      RC_FAIL(absl::StrCat("Next skips ", absl::FormatCivilTime(d)));
    }
  }
  for (absl::CivilDay d = start_day - 1;
       d > prev_day && start_day - d <= kMaxDays; --d) {
    if (r.MatchesDay(d) && !NearOffsetChange(zone, d)) {
      RC_FAIL(absl::StrCat("Prev skips ", absl::FormatCivilTime(d)));
    }
  }
}

RC_GTEST_PROP(CronProperty, ParseRejectsExactlyTheSchedulesThatNeverFire, ()) {
  const Case c = *GenCase(9);
  const ReferenceCron r = MustParseReference(c);
  const absl::StatusOr<Schedule> s = Schedule::Parse(c.expr, OptionsFor(c));
  RC_LOG() << "Parse: " << s.status() << "\n";
  if (s.ok()) {
    RC_ASSERT(r.AnyDayMatches());
    RC_ASSERT(s->hour_is_wildcard() == r.hour_is_wildcard());
  } else {
    RC_ASSERT(absl::StrContains(s.status().message(), "never fires"));
    RC_ASSERT(!r.AnyDayMatches());
  }
  RC_CLASSIFY(!s.ok(), "never fires");
}

// ----- Counterexamples the properties found, pinned so they fail on every run
// -----

Schedule ParseOrFail(absl::string_view expr, absl::string_view zone = "UTC") {
  ParseOptions options;
  options.zone = zone;
  absl::StatusOr<Schedule> s = Schedule::Parse(expr, options);
  EXPECT_TRUE(s.ok()) << expr << ": " << s.status();
  return *std::move(s);
}

TEST(CronCounterexample, NextInTheLastSecondBeforeASpringForwardFiresAtIt) {
  // Berlin 2026-03-29: 02:00 CET jumps to 03:00 CEST at 01:00Z, so 02:30 fires
  // at 01:00Z -- also when asked from less than a second before.
  const Schedule berlin = ParseOrFail("30 2 * * *", "Europe/Berlin");
  EXPECT_EQ(berlin.Next(Utc(2026, 3, 29, 0, 59, 58)), Utc(2026, 3, 29, 1));
  EXPECT_EQ(berlin.Next(Utc(2026, 3, 29, 0, 59, 59)), Utc(2026, 3, 29, 1));
  EXPECT_EQ(berlin.Next(Utc(2026, 3, 29, 0, 59, 59) + absl::Milliseconds(500)),
            Utc(2026, 3, 29, 1));
  // Chatham 2026-09-27: 02:45 +12:45 jumps to 03:45 +13:45 at 14:00Z.
  const Schedule chatham = ParseOrFail("0 3-23 * * *", "Pacific/Chatham");
  EXPECT_EQ(chatham.Next(Utc(2026, 9, 26, 13, 59, 59)), Utc(2026, 9, 26, 14));
}

TEST(CronCounterexample, DayOfMonthStarStepFiresOnlyOnTheSteppedDays) {
  const Schedule s = ParseOrFail("0 0 */2 * *");  // days 1, 3, 5, ...
  EXPECT_FALSE(s.Matches(absl::CivilSecond(2026, 1, 2, 0, 0, 0)));
  EXPECT_EQ(s.Next(Utc(2026, 1, 1)), Utc(2026, 1, 3));
}

TEST(CronCounterexample, DayOfWeekStarStepFiresOnlyOnTheSteppedDays) {
  // Sunday, Wednesday, Saturday; 2026-01-01 is a Thursday.
  const Schedule s = ParseOrFail("0 0 * * */3");
  EXPECT_EQ(s.NextN(Utc(2026, 1, 1), 3),
            (std::vector<absl::Time>{Utc(2026, 1, 3), Utc(2026, 1, 4),
                                     Utc(2026, 1, 7)}));
}

TEST(CronCounterexample, DayOfMonthStarStepStillRestrictsAWeekdaySchedule) {
  // Odd days that are Mondays (as in Vixie cron): not the 12th, the 19th.
  const Schedule s = ParseOrFail("0 0 */2 * 1");
  EXPECT_EQ(s.Next(Utc(2026, 1, 6)), Utc(2026, 1, 19));
}

// ----- The reference itself, on answers worked out by hand and with Python's
// zoneinfo -----

ReferenceCron Ref(absl::string_view expr, ReferenceOptions o = {}) {
  std::string error;
  std::optional<ReferenceCron> r = ReferenceCron::Parse(expr, o, &error);
  EXPECT_TRUE(r.has_value()) << expr << ": " << error;
  return *std::move(r);
}

std::optional<absl::Time> RefNext(absl::string_view expr, absl::Time after,
                                  ReferenceOptions o = {}) {
  return Ref(expr, o).NextWithin(after, absl::Hours(24 * 100));
}

TEST(ReferenceCron, BerlinSpringForwardFixedHourFiresAtTransitionOrSkips) {
  // 2026-03-29: 02:00 CET jumps to 03:00 CEST at 01:00Z; 02:30 does not exist.
  EXPECT_EQ(
      RefNext("30 2 * * *", Utc(2026, 3, 28, 12), {.zone = "Europe/Berlin"}),
      Utc(2026, 3, 29, 1));
  EXPECT_EQ(RefNext("30 2 * * *", Utc(2026, 3, 28, 12),
                    {.zone = "Europe/Berlin", .skip_gaps = true}),
            Utc(2026, 3, 30, 0, 30));
  // A wildcard hour runs in real time: 03:30 CEST follows 01:30 CET.
  EXPECT_EQ(
      RefNext("30 * * * *", Utc(2026, 3, 29, 0, 30), {.zone = "Europe/Berlin"}),
      Utc(2026, 3, 29, 1, 30));
}

TEST(ReferenceCron, NewYorkFallBackFixedHourFiresOnceOrTwice) {
  // 2026-11-01: 01:30 EDT is 05:30Z, 01:30 EST is 06:30Z.
  const ReferenceOptions ny = {.zone = "America/New_York"};
  EXPECT_EQ(RefNext("30 1 * * *", Utc(2026, 11, 1), ny),
            Utc(2026, 11, 1, 5, 30));
  EXPECT_EQ(RefNext("30 1 * * *", Utc(2026, 11, 1, 5, 30), ny),
            Utc(2026, 11, 2, 6, 30));
  EXPECT_EQ(RefNext("30 1 * * *", Utc(2026, 11, 1, 5, 30),
                    {.zone = "America/New_York", .repeat_twice = true}),
            Utc(2026, 11, 1, 6, 30));
  // A wildcard hour fires in both passes: 01:00 EST (06:00Z) follows 01:30 EDT.
  EXPECT_EQ(RefNext("*/30 * * * *", Utc(2026, 11, 1, 5, 30), ny),
            Utc(2026, 11, 1, 6));
  EXPECT_EQ(Ref("30 1 * * *", ny)
                .PrevWithin(Utc(2026, 11, 2, 6, 30), absl::Hours(48)),
            Utc(2026, 11, 1, 5, 30));
}

TEST(ReferenceCron, HalfHourAndThreeQuarterHourZones) {
  // Lord Howe 2026-10-04: 02:00 +10:30 jumps to 02:30 +11 at 2026-10-03T15:30Z.
  EXPECT_EQ(RefNext("15 2 * * *", Utc(2026, 10, 3, 12),
                    {.zone = "Australia/Lord_Howe"}),
            Utc(2026, 10, 3, 15, 30));
  // Chatham 2026-04-05: 03:45 +13:45 falls back to 02:45 +12:45; 03:00 is
  // 13:15Z and 14:15Z.
  const ReferenceOptions chatham = {.zone = "Pacific/Chatham"};
  EXPECT_EQ(RefNext("0 3 * * *", Utc(2026, 4, 4, 12), chatham),
            Utc(2026, 4, 4, 13, 15));
  EXPECT_EQ(RefNext("0 3 * * *", Utc(2026, 4, 4, 13, 15), chatham),
            Utc(2026, 4, 5, 14, 15));
  EXPECT_EQ(RefNext("0 3 * * *", Utc(2026, 4, 4, 13, 15),
                    {.zone = "Pacific/Chatham", .repeat_twice = true}),
            Utc(2026, 4, 4, 14, 15));
  // Kolkata is +05:30 all year.
  EXPECT_EQ(RefNext("0 9 * * *", Utc(2026, 7, 1), {.zone = "Asia/Kolkata"}),
            Utc(2026, 7, 1, 3, 30));
}

TEST(ReferenceCron, SaoPauloMidnightGapFiresAtTransition) {
  // 2018-11-04: 00:00 -03 jumped to 01:00 -02 at 03:00Z.
  EXPECT_EQ(RefNext("30 0 * * *", Utc(2018, 11, 3, 12),
                    {.zone = "America/Sao_Paulo"}),
            Utc(2018, 11, 4, 3));
  EXPECT_EQ(
      RefNext("CRON_TZ=America/Sao_Paulo 30 0 * * *", Utc(2018, 11, 3, 12)),
      Utc(2018, 11, 4, 3));
}

TEST(ReferenceCron, LastDaysAndNearestWeekdays) {
  // May 2026 ends on Sunday the 31st; August 2026 starts on Saturday the 1st.
  EXPECT_EQ(RefNext("0 0 LW * *", Utc(2026, 5, 1)), Utc(2026, 5, 29));
  EXPECT_EQ(RefNext("0 0 31W * *", Utc(2026, 5, 1)), Utc(2026, 5, 29));
  EXPECT_EQ(RefNext("0 0 31W * *", Utc(2026, 5, 30)),
            Utc(2026, 7, 31));  // June has no 31st
  EXPECT_EQ(RefNext("0 0 1W * *", Utc(2026, 7, 15)), Utc(2026, 8, 3));
  EXPECT_EQ(RefNext("0 0 L * *", Utc(2028, 2, 1)), Utc(2028, 2, 29));
  EXPECT_EQ(RefNext("0 0 L-3 * *", Utc(2026, 2, 1)), Utc(2026, 2, 25));
  EXPECT_EQ(RefNext("0 0 1,L * *", Utc(2026, 2, 1)), Utc(2026, 2, 28));
}

TEST(ReferenceCron, NthAndLastWeekdays) {
  // January 2026: Fridays 2, 9, 16, 23, 30; Mondays 5, 12, 19, 26.
  EXPECT_EQ(RefNext("0 0 * * 5L", Utc(2026, 1, 1)), Utc(2026, 1, 30));
  EXPECT_EQ(RefNext("0 0 * * FRIL", Utc(2026, 1, 1)), Utc(2026, 1, 30));
  EXPECT_EQ(RefNext("0 0 * * 1#2", Utc(2026, 1, 1)), Utc(2026, 1, 12));
  EXPECT_EQ(RefNext("0 0 * * MON#5", Utc(2026, 1, 1)), Utc(2026, 3, 30));
  // Quartz numbers Sunday 1: 2 is Monday, 6#2 the second Friday.
  EXPECT_EQ(RefNext("0 0 12 ? * 2", Utc(2026, 1, 1), {.quartz = true}),
            Utc(2026, 1, 5, 12));
  EXPECT_EQ(RefNext("0 0 0 ? * 6#2", Utc(2026, 1, 1), {.quartz = true}),
            Utc(2026, 1, 9));
}

TEST(ReferenceCron, DayFieldsCombineByDayMatch) {
  // 2026-01-02 is a Friday; the first Friday the 13th of 2026 is in February.
  EXPECT_EQ(RefNext("0 0 13 * 5", Utc(2026, 1, 1)), Utc(2026, 1, 2));
  EXPECT_EQ(RefNext("0 0 13 * 5", Utc(2026, 1, 1), {.day_match_all = true}),
            Utc(2026, 2, 13));
  // A day field starting with `*` does not trigger "either": both must match.
  EXPECT_EQ(RefNext("0 0 */2 * 1", Utc(2026, 1, 1)), Utc(2026, 1, 5));
  EXPECT_EQ(RefNext("0 0 */2 * 1", Utc(2026, 1, 6)), Utc(2026, 1, 19));
  EXPECT_EQ(RefNext("0 0 */2 * *", Utc(2026, 1, 1)), Utc(2026, 1, 3));
}

TEST(ReferenceCron, RangesWrapAndStep) {
  const ReferenceCron hours = Ref("0 22-2/2 * * *");
  EXPECT_TRUE(hours.MatchesWall(absl::CivilSecond(2026, 1, 1, 22, 0, 0)));
  EXPECT_FALSE(hours.MatchesWall(absl::CivilSecond(2026, 1, 1, 23, 0, 0)));
  EXPECT_TRUE(hours.MatchesWall(absl::CivilSecond(2026, 1, 1, 0, 0, 0)));
  EXPECT_TRUE(hours.MatchesWall(absl::CivilSecond(2026, 1, 1, 2, 0, 0)));
  EXPECT_FALSE(hours.MatchesWall(absl::CivilSecond(2026, 1, 1, 3, 0, 0)));
  // 2026-01-02 Fri, 03 Sat, 04 Sun, 05 Mon, 06 Tue.
  const ReferenceCron days = Ref("0 0 * * 6-1/2");
  EXPECT_FALSE(days.MatchesWall(absl::CivilSecond(2026, 1, 2, 0, 0, 0)));
  EXPECT_TRUE(days.MatchesWall(absl::CivilSecond(2026, 1, 3, 0, 0, 0)));
  EXPECT_FALSE(days.MatchesWall(absl::CivilSecond(2026, 1, 4, 0, 0, 0)));
  EXPECT_TRUE(days.MatchesWall(absl::CivilSecond(2026, 1, 5, 0, 0, 0)));
  const ReferenceCron sunday7 = Ref("0 0 * * 5-7");
  EXPECT_TRUE(sunday7.MatchesWall(absl::CivilSecond(2026, 1, 4, 0, 0, 0)));
  EXPECT_FALSE(sunday7.MatchesWall(absl::CivilSecond(2026, 1, 5, 0, 0, 0)));
  const ReferenceCron months = Ref("0 0 1 nov-Feb *");
  EXPECT_TRUE(months.MatchesWall(absl::CivilSecond(2026, 1, 1, 0, 0, 0)));
  EXPECT_FALSE(months.MatchesWall(absl::CivilSecond(2026, 3, 1, 0, 0, 0)));
  EXPECT_TRUE(months.MatchesWall(absl::CivilSecond(2026, 11, 1, 0, 0, 0)));
}

TEST(ReferenceCron, SecondsYearsAndRangeEnds) {
  EXPECT_EQ(RefNext("*/20 * * * * *", Utc(2026, 1, 1, 0, 0, 5)),
            Utc(2026, 1, 1, 0, 0, 20));
  EXPECT_EQ(RefNext("0 0 0 1 1 * 2027", Utc(2026, 12, 1)), Utc(2027, 1, 1));
  EXPECT_EQ(RefNext("0 0 0 1 1 * 2027", Utc(2027, 1, 2)), std::nullopt);
  EXPECT_EQ(RefNext("0 0 1 1 *", Utc(2399, 12, 1)),
            std::nullopt);  // 2400 is out of range
  // In New York the first instants of 1970 are still 1969 on the wall.
  EXPECT_EQ(RefNext("0 * * * *", Utc(1969, 12, 31, 23, 30),
                    {.zone = "America/New_York"}),
            Utc(1970, 1, 1, 5));
}

// ----- Every edge of every kind of transition, exhaustively -----

// For one spring-forward and one fall-back of each zone with daylight saving,
// schedules that fire once a day at the minute before, the first minute, the
// last minute and the minute after the skipped or repeated range, asked from
// one second before, at and one second after the transition.
TEST(CronAgainstReference, TransitionEdgesAgreeWithTheReference) {
  const absl::Duration window = absl::Hours(27);
  int checked = 0;
  for (const std::string& zone_name : ZoneNames()) {
    const absl::TimeZone zone = LoadZone(zone_name);
    bool seen_spring = false, seen_fall = false;
    for (const absl::Time t : NearbyTransitions(zone_name)) {
      const absl::TimeZone::CivilInfo before = zone.At(t - absl::Seconds(1));
      const absl::TimeZone::CivilInfo after = zone.At(t);
      const bool spring = after.offset > before.offset;
      if (spring ? seen_spring : seen_fall) continue;
      (spring ? seen_spring : seen_fall) = true;
      const absl::CivilMinute first(before.cs + 1);
      const absl::CivilMinute last(after.cs);
      // The gap policy matters in spring, the repeat policy in autumn.
      const std::vector<DstPolicy> policies =
          spring ? std::vector<DstPolicy>{{GapPolicy::kRunAtTransition},
                                          {GapPolicy::kSkip}}
                 : std::vector<DstPolicy>{
                       {GapPolicy::kRunAtTransition, RepeatPolicy::kOnce},
                       {GapPolicy::kRunAtTransition, RepeatPolicy::kTwice}};
      for (const absl::CivilMinute edge : {first - 1, first, last - 1, last}) {
        const std::string expr =
            absl::StrCat(edge.minute(), " ", edge.hour(), " * * *");
        for (const DstPolicy& dst : policies) {
          ParseOptions options;
          options.zone = zone_name;
          options.dst = dst;
          const absl::StatusOr<Schedule> s = Schedule::Parse(expr, options);
          ASSERT_TRUE(s.ok()) << s.status();
          const ReferenceCron r =
              Ref(expr, {.zone = zone_name,
                         .skip_gaps = dst.gap == GapPolicy::kSkip,
                         .repeat_twice = dst.repeat == RepeatPolicy::kTwice});
          for (const absl::Time start :
               {t - absl::Seconds(1), t, t + absl::Seconds(1)}) {
            SCOPED_TRACE(absl::StrCat(
                "\"", expr, "\" in ", zone_name, ", gap ",
                dst.gap == GapPolicy::kSkip ? "kSkip" : "kRunAtTransition",
                ", repeat ",
                dst.repeat == RepeatPolicy::kTwice ? "kTwice" : "kOnce",
                ", from ", Format(start, zone)));
            EXPECT_EQ(s->Next(start), r.NextWithin(start, window));
            EXPECT_EQ(s->Prev(start), r.PrevWithin(start, window));
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 5 * 2 * 4 * 2 * 3);  // zones, transitions, edges, ...
}

// Every day-of-month and day-of-week special, alone and combined with the
// other day field both ways, on every day of 2024-2031 (leap and common years,
// months starting on every weekday).
TEST(CronAgainstReference, DaySpecialsAgreeWithTheReference) {
  std::vector<std::string> doms = {"L", "LW", "*/2", "?"};
  std::vector<std::string> dows = {};
  for (int n = 0; n <= 30; ++n) doms.push_back(absl::StrCat("L-", n));
  for (int d = 1; d <= 31; ++d) doms.push_back(absl::StrCat(d, "W"));
  for (int w = 0; w <= 7; ++w) {
    dows.push_back(absl::StrCat(w, "L"));
    for (int k = 1; k <= 5; ++k) dows.push_back(absl::StrCat(w, "#", k));
  }
  // Each special alone, or with a plain value in the other field, either or
  // both matching.
  std::vector<std::pair<std::string, DayMatch>> exprs;
  for (const DayMatch day_match : {DayMatch::kAny, DayMatch::kAll}) {
    for (const std::string& dom : doms) {
      exprs.push_back({absl::StrCat("0 0 ", dom, " * 1"), day_match});
    }
    for (const std::string& dow : dows) {
      exprs.push_back({absl::StrCat("0 0 13 * ", dow), day_match});
    }
  }
  for (const std::string& dom : doms) {
    exprs.push_back({absl::StrCat("0 0 ", dom, " * *"), DayMatch::kAny});
  }
  for (const std::string& dow : dows) {
    exprs.push_back({absl::StrCat("0 0 * * ", dow), DayMatch::kAny});
  }
  for (const auto& [expr, day_match] : exprs) {
    ParseOptions options;
    options.day_match = day_match;
    const absl::StatusOr<Schedule> s = Schedule::Parse(expr, options);
    const ReferenceCron r =
        Ref(expr, {.day_match_all = day_match == DayMatch::kAll});
    int mismatches = 0;
    for (absl::CivilDay d(2024, 1, 1); d.year() <= 2031; ++d) {
      const absl::CivilSecond midnight(d);
      const bool matches = s.ok() && s->Matches(midnight);
      if (matches != r.MatchesWall(midnight) && ++mismatches <= 3) {
        ADD_FAILURE() << "\"" << expr << "\" (kA"
                      << (day_match == DayMatch::kAll ? "ll" : "ny") << ") on "
                      << d << ": Matches() = " << matches << " (" << s.status()
                      << ")";
      }
    }
  }
}

}  // namespace
}  // namespace chime::cron
