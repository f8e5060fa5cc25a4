// Schedule::Describe(): an English sentence for a schedule.
//
// The expression is parsed again (internal::ParseExpression, with the
// schedule's own dialect and hash key, so `H` resolves to the same values) and
// the syntax tree is read field by field. The sentence is a list of clauses
// joined by ", ": time of day, days, months, years, zone. For example
// "0 12 13 1 5" in UTC gives
//
//   "At 12:00" + "on day 13 of the month or on Friday" + "only in January"
//   + "UTC"
//
// Common shapes get idiomatic clauses ("Every 5 minutes", "Monday through
// Friday", "At 08:00 and 17:00"); anything else falls back to listing a
// field's values as runs ("at minutes 0 through 10 and 50 through 59 past the
// hour"), which is clumsy but always correct. The day clause follows the rule
// in docs/cron.md: day-of-month and day-of-week are joined by "or" when both
// are restricted (DayMatch::kAny), and by "and" when both must match.
//
// Known limit: a step is described as written, so `*/7` is "every 7 minutes"
// although minute 56 is followed by minute 0, as in every cron describer.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "chime/cron.h"
#include "src/cron/parser.h"

namespace chime::cron {
namespace {

using internal::Field;
using internal::FieldId;
using internal::Item;

constexpr absl::string_view kMonthNames[] = {
    "January", "February", "March",     "April",   "May",      "June",
    "July",    "August",   "September", "October", "November", "December"};
constexpr absl::string_view kDayNames[] = {"Sunday",    "Monday",   "Tuesday",
                                           "Wednesday", "Thursday", "Friday",
                                           "Saturday"};
constexpr absl::string_view kNth[] = {"first", "second", "third", "fourth",
                                      "fifth"};

// "a", "a and b", "a, b and c".
std::string JoinAnd(const std::vector<std::string>& parts) {
  if (parts.empty()) return "";
  if (parts.size() == 1) return parts[0];
  std::vector<std::string> head(parts.begin(), parts.end() - 1);
  return absl::StrCat(absl::StrJoin(head, ", "), " and ", parts.back());
}

// "1 minute", "5 minutes".
std::string Count(int n, absl::string_view unit) {
  return absl::StrCat(n, " ", unit, n == 1 ? "" : "s");
}

// "2nd", "11th", "23rd".
std::string Ordinal(int n) {
  absl::string_view suffix = "th";
  if (n % 100 < 11 || n % 100 > 13) {
    if (n % 10 == 1) suffix = "st";
    if (n % 10 == 2) suffix = "nd";
    if (n % 10 == 3) suffix = "rd";
  }
  return absl::StrCat(n, suffix);
}

std::string Clock(int h, int m) { return absl::StrFormat("%02d:%02d", h, m); }
std::string Clock(int h, int m, int s) {
  return absl::StrFormat("%02d:%02d:%02d", h, m, s);
}

// "1h30m", "90s" -> "1m30s", "1500ms" -> "1s500ms".
std::string FormatDuration(int64_t ms) {
  std::string out;
  constexpr std::pair<int64_t, absl::string_view> kUnits[] = {{86'400'000, "d"},
                                                              {3'600'000, "h"},
                                                              {60'000, "m"},
                                                              {1'000, "s"},
                                                              {1, "ms"}};
  for (const auto& [size, name] : kUnits) {
    if (ms >= size) {
      absl::StrAppend(&out, ms / size, name);
      ms %= size;
    }
  }
  return out;
}

// The value set of a field's plain ranges (special day items are not included),
// as bits. Weekday 7 is folded onto 0. Not used for the year field.
uint64_t Values(const Field& field) {
  const FieldId id = field.id;
  const int fmin = internal::FieldMin(id), fmax = internal::FieldMax(id);
  const bool weekday = id == FieldId::kDayOfWeek;
  // Weekday ranges that wrap were normalized to 0-6 by the parser, so they wrap
  // modulo 7.
  const int span = weekday ? 7 : fmax - fmin + 1;
  uint64_t bits = 0;
  for (const Item& item : field.items) {
    if (item.kind != Item::Kind::kRange) continue;
    // Walk lo, lo+step, ... up to hi, wrapping around the domain when hi < lo.
    const int length =
        item.hi >= item.lo ? item.hi - item.lo : item.hi - item.lo + span;
    for (int k = 0; k <= length; k += item.step) {
      int v = item.lo + k;
      if (v > fmax || (weekday && item.hi < item.lo)) {
        v = fmin + (v - fmin) % span;
      }
      bits |= uint64_t{1} << (weekday ? v % 7 : v);
    }
  }
  return bits;
}

int PopCount(uint64_t bits) {
  int n = 0;
  for (; bits != 0; bits &= bits - 1) ++n;
  return n;
}

int LowestBit(uint64_t bits) {
  for (int v = 0; v < 64; ++v) {
    if ((bits >> v) & 1) return v;
  }
  return -1;
}

uint64_t FullSet(FieldId id) {
  const int fmin = internal::FieldMin(id);
  const int fmax = id == FieldId::kDayOfWeek ? 6 : internal::FieldMax(id);
  uint64_t bits = 0;
  for (int v = fmin; v <= fmax; ++v) bits |= uint64_t{1} << v;
  return bits;
}

bool HasSpecialItems(const Field& field) {
  for (const Item& item : field.items) {
    if (item.kind != Item::Kind::kRange) return true;
  }
  return false;
}

// Every item is one value (`5`, `H`, `5-5`), so the field is a plain list.
bool AllSingleValues(const Field& field) {
  for (const Item& item : field.items) {
    if (item.kind != Item::Kind::kRange || item.lo != item.hi) return false;
  }
  return true;
}

// The field is exactly `*/n` with n > 1, or a range over the whole domain with
// a step (`0/5`, `0-59/5`, which are `*/5`); sets *step.
bool IsStarStep(const Field& field, int* step) {
  if (field.items.size() != 1) return false;
  const Item& item = field.items[0];
  if (item.kind != Item::Kind::kRange || item.step <= 1) return false;
  if (!item.star && !(item.lo == internal::FieldMin(field.id) &&
                      item.hi == internal::FieldMax(field.id))) {
    return false;
  }
  *step = item.step;
  return true;
}

// The field is exactly one written range `a-b`, `a-b/n`, `a/n` or `H/n` (not
// `*`, not one value).
const Item* SingleRange(const Field& field) {
  if (field.items.size() != 1) return nullptr;
  const Item& item = field.items[0];
  if (item.kind != Item::Kind::kRange || item.star || item.lo == item.hi) {
    return nullptr;
  }
  return &item;
}

struct Run {
  int lo;
  int hi;  // hi < lo: the run wraps past the field's maximum
  int length;
};

// Maximal runs of consecutive values in [fmin, fmax]. With `wrap`, a run
// ending at fmax and one starting at fmin become one run, listed last (hours
// 22-23 and 0-2 -> 22-2), if it will be written "a through b" or is the only
// run; otherwise a list keeps its order ("Sunday, Tuesday, Thursday and
// Saturday", not "Tuesday, Thursday, Saturday and Sunday").
std::vector<Run> Runs(uint64_t bits, int fmin, int fmax, bool wrap) {
  std::vector<Run> runs;
  for (int v = fmin; v <= fmax; ++v) {
    if (!((bits >> v) & 1)) continue;
    int end = v;
    while (end + 1 <= fmax && ((bits >> (end + 1)) & 1)) ++end;
    runs.push_back({v, end, end - v + 1});
    v = end;
  }
  if (wrap && runs.size() > 1 && runs.front().lo == fmin &&
      runs.back().hi == fmax) {
    Run merged{runs.back().lo, runs.front().hi,
               runs.back().length + runs.front().length};
    if (merged.length < 3 && runs.size() > 2) return runs;
    runs.erase(runs.begin());
    runs.back() = merged;
  }
  return runs;
}

// Runs as list entries: a run of three or more is "a through b", shorter runs
// are listed value by value. `name` writes one value.
template <typename Name>
std::vector<std::string> RunEntries(const std::vector<Run>& runs, int fmin,
                                    int fmax, Name name) {
  std::vector<std::string> out;
  for (const Run& r : runs) {
    if (r.length >= 3) {
      out.push_back(absl::StrCat(name(r.lo), " through ", name(r.hi)));
      continue;
    }
    for (int k = 0, v = r.lo; k < r.length; ++k, v = v == fmax ? fmin : v + 1) {
      out.push_back(name(v));
    }
  }
  return out;
}

std::string NumberList(uint64_t bits, FieldId id) {
  const int fmin = internal::FieldMin(id), fmax = internal::FieldMax(id);
  return JoinAnd(RunEntries(Runs(bits, fmin, fmax, /*wrap=*/false), fmin, fmax,
                            [](int v) { return absl::StrCat(v); }));
}

// "second 5" / "seconds 0, 15 and 45".
std::string NumberedValues(absl::string_view unit, uint64_t bits, FieldId id) {
  return absl::StrCat(unit, PopCount(bits) == 1 ? "" : "s", " ",
                      NumberList(bits, id));
}

// The three time-of-day fields and their value sets.
struct TimeFields {
  const Field& sec;
  const Field& min;
  const Field& hour;
  uint64_t secs;
  uint64_t mins;
  uint64_t hours;
};

// Clock times ("At 08:00 and 17:00") when the fields are short lists of single
// values, or the schedule fires once an hour in a few hours that no better
// clause describes. Empty otherwise.
std::string ClockList(const TimeFields& t) {
  constexpr int kMaxTimes = 12;
  constexpr int kMaxHours = 8;
  const int n_secs = PopCount(t.secs), n_mins = PopCount(t.mins),
            n_hours = PopCount(t.hours);
  if (!AllSingleValues(t.sec) || !AllSingleValues(t.min)) return "";
  int step = 0;
  const bool hours_listed = AllSingleValues(t.hour);
  // Shapes TimeClauses describes better: every hour, `*/n`, a window `a-b` or
  // `a-b/n`.
  const Item* range = SingleRange(t.hour);
  const bool hours_structured =
      IsStarStep(t.hour, &step) || t.hours == FullSet(FieldId::kHour) ||
      (range != nullptr && (range->hi >= range->lo || range->step == 1));
  const bool few_hours =
      n_secs == 1 && n_mins == 1 && !hours_structured && n_hours <= kMaxHours;
  if (!(hours_listed || few_hours) || n_secs * n_mins * n_hours > kMaxTimes) {
    return "";
  }
  const bool show_seconds = t.secs != 1;  // any second other than 0
  std::vector<std::string> times;
  for (int h = 0; h < 24; ++h) {
    if (!((t.hours >> h) & 1)) continue;
    for (int m = 0; m < 60; ++m) {
      if (!((t.mins >> m) & 1)) continue;
      for (int s = 0; s < 60; ++s) {
        if (!((t.secs >> s) & 1)) continue;
        times.push_back(show_seconds ? Clock(h, m, s) : Clock(h, m));
      }
    }
  }
  return absl::StrCat("at ", JoinAnd(times));
}

// "every 10 minutes between minutes 10 and 50 past the hour" for one range item
// `a-b/n`.
std::string StepBetween(const Item& item, absl::string_view unit,
                        absl::string_view of) {
  return absl::StrCat("every ", item.step == 1 ? unit : Count(item.step, unit),
                      " between ", unit, "s ", item.lo, " and ", item.hi,
                      " past the ", of);
}

// The hours as a window, "between 08:00 and 18:59", if they are one run
// (possibly wrapping).
std::string HourWindow(uint64_t hours) {
  const std::vector<Run> runs = Runs(hours, 0, 23, /*wrap=*/true);
  if (runs.size() != 1) return "";
  return absl::StrCat("between ", Clock(runs[0].lo, 0), " and ",
                      Clock(runs[0].hi, 59));
}

// The time-of-day clauses: when in the day the schedule fires.
std::vector<std::string> TimeClauses(const TimeFields& t) {
  const uint64_t all_secs = FullSet(FieldId::kSecond),
                 all_mins = FullSet(FieldId::kMinute),
                 all_hours = FullSet(FieldId::kHour);
  if (std::string list = ClockList(t); !list.empty()) return {list};

  std::vector<std::string> out;
  int step = 0;
  const bool one_sec = PopCount(t.secs) == 1, one_min = PopCount(t.mins) == 1;
  const int sec = LowestBit(t.secs), min = LowestBit(t.mins);

  // Fires once an hour, at mm:ss past it.
  if (one_sec && one_min) {
    if (sec == 0 && min == 0) {
      if (t.hours == all_hours) return {"every hour"};
      if (IsStarStep(t.hour, &step)) {
        return {absl::StrCat("every ", Count(step, "hour"))};
      }
    }
    std::string at = absl::StrCat("at ", Count(min, "minute"));
    if (sec != 0) absl::StrAppend(&at, " and ", Count(sec, "second"));
    if (t.hours == all_hours) return {absl::StrCat(at, " past the hour")};
    const Item* range = SingleRange(t.hour);
    if (IsStarStep(t.hour, &step)) {
      return {absl::StrCat(at, " past the hour"),
              absl::StrCat("every ", Count(step, "hour"))};
    }
    if (range != nullptr && range->hi >= range->lo) {
      std::string window = absl::StrCat("between ", Clock(range->lo, 0),
                                        " and ", Clock(range->hi, 59));
      if (range->step > 1) {
        window =
            absl::StrCat("every ", Count(range->step, "hour"), " ", window);
      }
      if (sec == 0 && min == 0) {
        // "every 2 hours between 08:00 and 18:59" says it all.
        return range->step > 1 ? std::vector<std::string>{window}
                               : std::vector<std::string>{"every hour", window};
      }
      return {absl::StrCat(at, " past the hour"), window};
    }
    // A wrapping window such as 22-2.
    std::string window = HourWindow(t.hours);
    if (range != nullptr && range->step == 1 && !window.empty()) {
      return {sec == 0 && min == 0 ? "every hour"
                                   : absl::StrCat(at, " past the hour"),
              window};
    }
    return {absl::StrCat(at, " past ",
                         NumberedValues("hour", t.hours, FieldId::kHour))};
  }

  // Several times an hour. First the seconds and minutes ...
  bool minute_in_hour_window = false;  // the minute clause names the hour too
  if (one_sec && sec == 0) {
    const Item* range = SingleRange(t.min);
    if (t.mins == all_mins) {
      out.push_back("every minute");
    } else if (IsStarStep(t.min, &step)) {
      out.push_back(absl::StrCat("every ", Count(step, "minute")));
    } else if (range != nullptr && range->hi > range->lo &&
               PopCount(t.hours) == 1) {
      const int h = LowestBit(t.hours);
      out.push_back(absl::StrCat(
          "every ", range->step == 1 ? "minute" : Count(range->step, "minute"),
          " between ", Clock(h, range->lo), " and ", Clock(h, range->hi)));
      minute_in_hour_window = true;
    } else if (range != nullptr && range->hi > range->lo) {
      out.push_back(StepBetween(*range, "minute", "hour"));
    } else {
      out.push_back(absl::StrCat(
          "at ", NumberedValues("minute", t.mins, FieldId::kMinute),
          " past the hour"));
    }
  } else if (one_sec) {
    out.push_back(
        absl::StrCat("at ", Count(sec, "second"), " past the minute"));
    const Item* range = SingleRange(t.min);
    if (t.mins == all_mins) {
      // "at 30 seconds past the minute" already says every minute.
    } else if (IsStarStep(t.min, &step)) {
      out.push_back(absl::StrCat("every ", Count(step, "minute")));
    } else if (range != nullptr && range->hi > range->lo) {
      out.push_back(StepBetween(*range, "minute", "hour"));
    } else {
      out.push_back(absl::StrCat(
          "at ", NumberedValues("minute", t.mins, FieldId::kMinute),
          " past the hour"));
    }
  } else {
    // Several seconds in each matching minute.
    const Item* range = SingleRange(t.sec);
    if (t.secs == all_secs) {
      out.push_back("every second");
    } else if (IsStarStep(t.sec, &step)) {
      out.push_back(absl::StrCat("every ", Count(step, "second")));
    } else if (range != nullptr && range->hi > range->lo) {
      out.push_back(StepBetween(*range, "second", "minute"));
    } else {
      out.push_back(absl::StrCat(
          "at ", NumberedValues("second", t.secs, FieldId::kSecond),
          " past the minute"));
    }
    if (one_min && PopCount(t.hours) == 1) {
      const int h = LowestBit(t.hours);
      out.push_back(absl::StrCat("between ", Clock(h, min, 0), " and ",
                                 Clock(h, min, 59)));
      return out;
    }
    if (t.mins != all_mins) {
      out.push_back(absl::StrCat(
          "during ", NumberedValues("minute", t.mins, FieldId::kMinute),
          " past the hour"));
    }
  }

  // ... then the hours the minutes fall in.
  if (t.hours == all_hours || minute_in_hour_window) return out;
  if (std::string window = HourWindow(t.hours); !window.empty()) {
    out.push_back(window);
  } else {
    out.push_back(absl::StrCat(
        "during ", NumberedValues("hour", t.hours, FieldId::kHour)));
  }
  return out;
}

// Day-of-month parts without the leading "on" and trailing "of the month": "day
// 1", "days 1 through 5", "the last day", "the weekday nearest day 15".
std::vector<std::string> DayOfMonthParts(const Field& field) {
  std::vector<std::string> parts;
  const uint64_t days = Values(field);
  if (days != 0) {
    parts.push_back(NumberedValues("day", days, FieldId::kDayOfMonth));
  }
  for (const Item& item : field.items) {
    switch (item.kind) {
      case Item::Kind::kRange:
        break;
      case Item::Kind::kLastDay:
        parts.push_back(item.n == 0 ? "the last day"
                                    : absl::StrCat(Count(item.n, "day"),
                                                   " before the last day"));
        break;
      case Item::Kind::kLastWeekday:
        parts.push_back("the last weekday");
        break;
      case Item::Kind::kNearestWeekday:
        parts.push_back(absl::StrCat("the weekday nearest day ", item.lo));
        break;
      case Item::Kind::kLastOfWeekday:
      case Item::Kind::kNthOfWeekday:
        break;  // day-of-week only
    }
  }
  return parts;
}

std::string DayOfMonthClause(const Field& field) {
  const std::vector<std::string> parts = DayOfMonthParts(field);
  const Item* range = SingleRange(field);
  if (range != nullptr && range->step > 1) {
    return absl::StrCat("on every ", Ordinal(range->step),
                        " day of the month from day ", range->lo, " through ",
                        range->hi);
  }
  int step = 0;
  if (IsStarStep(field, &step)) {
    return absl::StrCat("on every ", Ordinal(step),
                        " day of the month from day 1 through 31");
  }
  if (field.items.size() == 1 && field.items[0].kind == Item::Kind::kLastDay &&
      field.items[0].n > 0) {
    // "3 days before the last day of the month": "on" would not read.
    return absl::StrCat(parts[0], " of the month");
  }
  return absl::StrCat("on ", JoinAnd(parts), " of the month");
}

// Weekday names, with runs: "Monday through Friday", "Saturday and Sunday".
std::vector<std::string> WeekdayNames(uint64_t weekdays) {
  return RunEntries(Runs(weekdays, 0, 6, /*wrap=*/true), 0, 6,
                    [](int w) { return std::string(kDayNames[w]); });
}

// Day-of-week parts without the leading "on": "Monday", "the last Friday of the
// month".
std::vector<std::string> DayOfWeekParts(const Field& field) {
  std::vector<std::string> parts = WeekdayNames(Values(field));
  for (const Item& item : field.items) {
    if (item.kind == Item::Kind::kLastOfWeekday) {
      parts.push_back(
          absl::StrCat("the last ", kDayNames[item.lo % 7], " of the month"));
    } else if (item.kind == Item::Kind::kNthOfWeekday) {
      parts.push_back(absl::StrCat("the ", kNth[item.n - 1], " ",
                                   kDayNames[item.lo % 7], " of the month"));
    }
  }
  return parts;
}

// The day-of-week clause when it is the only day restriction.
std::string DayOfWeekClauseAlone(const Field& field) {
  const uint64_t weekdays = Values(field);
  if (!HasSpecialItems(field)) {
    const std::vector<Run> runs = Runs(weekdays, 0, 6, /*wrap=*/true);
    if (runs.size() == 1 && runs[0].length >= 3) {
      return absl::StrCat(kDayNames[runs[0].lo], " through ",
                          kDayNames[runs[0].hi]);
    }
    return absl::StrCat("only on ", JoinAnd(WeekdayNames(weekdays)));
  }
  return absl::StrCat("on ", JoinAnd(DayOfWeekParts(field)));
}

// The days clause, following the day-of-month / day-of-week rule; empty if
// every day matches.
std::string DayClause(const Field& dom, const Field& dow, DayMatch day_match) {
  const bool dom_restricts =
      HasSpecialItems(dom) || Values(dom) != FullSet(FieldId::kDayOfMonth);
  const bool dow_restricts =
      HasSpecialItems(dow) || Values(dow) != FullSet(FieldId::kDayOfWeek);
  const bool both_must_match =
      day_match == DayMatch::kAll || dom.star() || dow.star();
  if (!both_must_match && (!dom_restricts || !dow_restricts)) {
    return "";  // either field matching every day lets every day through
  }
  if (dom_restricts && dow_restricts) {
    return absl::StrCat(DayOfMonthClause(dom),
                        both_must_match ? " and on " : " or on ",
                        JoinAnd(DayOfWeekParts(dow)));
  }
  if (dom_restricts) return DayOfMonthClause(dom);
  if (dow_restricts) return DayOfWeekClauseAlone(dow);
  return "";
}

std::string MonthClause(const Field& field) {
  const uint64_t months = Values(field);
  if (months == FullSet(FieldId::kMonth)) return "";
  return absl::StrCat(
      "only in ",
      JoinAnd(RunEntries(Runs(months, 1, 12, /*wrap=*/true), 1, 12, [](int m) {
        return std::string(kMonthNames[m - 1]);
      })));
}

std::string YearClause(const Field& field) {
  std::vector<std::string> parts;
  for (const Item& item : field.items) {
    if (item.star && item.step == 1) return "";  // every year
    if (item.lo == item.hi) {
      parts.push_back(absl::StrCat(item.lo));
    } else if (item.step == 1) {
      parts.push_back(absl::StrCat(item.lo, " through ", item.hi));
    } else {
      parts.push_back(absl::StrCat("every ", Ordinal(item.step), " year from ",
                                   item.lo, " through ", item.hi));
    }
  }
  if (parts.size() == 1 && field.items[0].lo == field.items[0].hi) {
    return absl::StrCat("only in ", parts[0]);
  }
  return absl::StrCat("in ", JoinAnd(parts));
}

}  // namespace

std::string Schedule::Describe() const {
  if (every_ms_ > 0) return absl::StrCat("Every ", FormatDuration(every_ms_));

  ParseOptions options;
  options.dialect = dialect_;
  options.zone = zone_name();
  options.hash_key = hash_key();
  absl::StatusOr<internal::ParsedExpression> parsed =
      internal::ParseExpression(expression(), options);
  // The expression parsed when the schedule was made; this cannot fail, but a
  // description must never be empty.
  if (!parsed.ok()) return absl::StrCat(expression(), ", ", zone_name());
  auto field = [&](FieldId id) -> const Field& {
    return parsed->fields[static_cast<int>(id)];
  };

  const TimeFields time{
      field(FieldId::kSecond),         field(FieldId::kMinute),
      field(FieldId::kHour),           Values(field(FieldId::kSecond)),
      Values(field(FieldId::kMinute)), Values(field(FieldId::kHour))};
  std::vector<std::string> clauses = TimeClauses(time);
  for (std::string clause : {DayClause(field(FieldId::kDayOfMonth),
                                       field(FieldId::kDayOfWeek), day_match_),
                             MonthClause(field(FieldId::kMonth)),
                             YearClause(field(FieldId::kYear))}) {
    if (!clause.empty()) clauses.push_back(std::move(clause));
  }
  clauses.push_back(zone_name());
  std::string sentence = absl::StrJoin(clauses, ", ");
  sentence[0] = absl::ascii_toupper(static_cast<unsigned char>(sentence[0]));
  return sentence;
}

}  // namespace chime::cron
