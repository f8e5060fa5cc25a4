// ReferenceCron: a deliberately slow, obviously correct model of the cron
// language, for the property tests in schedule_property_test.cc.
//
// It shares no code with src/cron: it has its own parser for the subset the
// tests generate (numbers, names, `*`, `?`, lists, ranges that wrap in cyclic
// fields, steps, `a/s`, day-of-month `L`, `L-n`, `LW`, `nW`, day-of-week `dL`,
// `d#k`; 5, 6 or 7 fields; the Quartz weekday numbering; a CRON_TZ=/TZ=
// prefix), its own matching of a wall time, and it finds fire times by asking
// every instant, one at a time, whether it fires. Instant t fires when
//
//   - its wall time in the zone matches every field, and either the hour field
//     is a wildcard (starts with `*`), or the repeat policy is "twice", or t is
//     not the second occurrence of a repeated wall time; or
//   - the hour field names fixed hours, the gap policy is "run at the
//     transition", the offset grows at t (a spring-forward transition), and
//     some wall time in the skipped range [wall(t - 1s) + 1s, wall(t)) matches
//     every field.
//
// These are the daylight-saving rules of include/chime/cron.h, written as a
// predicate on one instant instead of a search. Day fields: when both
// day-of-month and day-of-week are restricted (neither starts with `*` nor is
// `?`), a day matches if either matches (both, with "match all"); otherwise it
// must match both, where `*` and `?` match every day and `*/2` still means odd
// days (as in Vixie cron).
//
// Speed: the walk steps one second, or one minute when the second field is
// exactly `0`. The minute step is exact only because the tests' zones have
// whole-minute offsets, changing at whole minutes, since 1970; Fires() aborts
// if it meets an offset that is not whole minutes.
//
// Thread-safety: immutable after Parse.
#ifndef CHIME_SRC_CRON_REFERENCE_CRON_H_
#define CHIME_SRC_CRON_REFERENCE_CRON_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"

namespace chime::cron::reference {

struct ReferenceOptions {
  // Overridden by a CRON_TZ=/TZ= prefix.
  std::string zone = "UTC";
  // Day-of-week is written 1-7 with 1 = Sunday (else 0-7, 0 and 7 Sunday).
  bool quartz = false;
  // When both day fields are restricted, a day must match both.
  bool day_match_all = false;
  // A fixed wall time in a spring-forward gap does not fire at all.
  bool skip_gaps = false;
  // A fixed wall time in a repeated hour fires in both passes.
  bool repeat_twice = false;
};

class ReferenceCron {
 public:
  // Parses `expr`, or returns nullopt with a reason in *error for text outside
  // the subset.
  static std::optional<ReferenceCron> Parse(absl::string_view expr,
                                            const ReferenceOptions& options,
                                            std::string* error) {
    ReferenceCron r;
    r.options_ = options;
    std::vector<std::string> tokens =
        absl::StrSplit(expr, ' ', absl::SkipEmpty());
    std::string zone_name = options.zone;
    if (!tokens.empty()) {
      for (absl::string_view prefix : {"CRON_TZ=", "TZ="}) {
        if (absl::StartsWith(tokens[0], prefix)) {
          zone_name = tokens[0].substr(prefix.size());
          tokens.erase(tokens.begin());
          break;
        }
      }
    }
    if (!absl::LoadTimeZone(zone_name, &r.zone_)) {
      Error(error, "unknown zone " + zone_name);
      return std::nullopt;
    }
    // Every form becomes seven fields: second minute hour dom month dow year.
    if (tokens.size() == 5) tokens.insert(tokens.begin(), "0");
    if (tokens.size() == 6) tokens.push_back("*");
    if (tokens.size() != 7) {
      Error(error, "expected 5, 6 or 7 fields");
      return std::nullopt;
    }
    const std::string& second = tokens[0];
    const std::string& minute = tokens[1];
    const std::string& hour = tokens[2];
    const std::string& dom = tokens[3];
    const std::string& month = tokens[4];
    const std::string& dow = tokens[5];
    const std::string& year = tokens[6];

    static const std::vector<std::string> kMonths = {
        "JAN", "FEB", "MAR", "APR", "MAY", "JUN",
        "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
    if (!ParseSet(second, 0, 59, true, {}, &r.seconds_, error) ||
        !ParseSet(minute, 0, 59, true, {}, &r.minutes_, error) ||
        !ParseSet(hour, 0, 23, true, {}, &r.hours_, error) ||
        !ParseSet(month, 1, 12, true, kMonths, &r.months_, error) ||
        !ParseSet(year, 1970, 2399, false, {}, &r.years_, error) ||
        !r.ParseDayOfMonth(dom, error) || !r.ParseDayOfWeek(dow, error)) {
      return std::nullopt;
    }
    r.hour_is_wildcard_ = hour[0] == '*';
    r.dom_restricted_ = dom[0] != '*' && dom[0] != '?';
    r.dow_restricted_ = dow[0] != '*' && dow[0] != '?';
    r.minute_steps_ = second == "0";
    return r;
  }

  const absl::TimeZone& zone() const { return zone_; }
  bool hour_is_wildcard() const { return hour_is_wildcard_; }
  // The walk's step: one minute when only second 0 matches, else one second.
  absl::Duration step() const {
    return minute_steps_ ? absl::Minutes(1) : absl::Seconds(1);
  }

  // Whether wall time `w` matches every field; daylight saving plays no part.
  bool MatchesWall(absl::CivilSecond w) const {
    return hours_[w.hour()] && minutes_[w.minute()] && seconds_[w.second()] &&
           MatchesDay(absl::CivilDay(w));
  }

  // Whether the whole-second instant `t` is a fire time (see the header
  // comment).
  bool Fires(absl::Time t) const {
    const absl::TimeZone::CivilInfo now = zone_.At(t);
    CheckWholeMinutes(now);
    if (MatchesWall(now.cs) && (hour_is_wildcard_ || options_.repeat_twice ||
                                !IsSecondPass(t, now.cs))) {
      return true;
    }
    if (hour_is_wildcard_ || options_.skip_gaps) return false;
    const absl::TimeZone::CivilInfo before = zone_.At(t - absl::Seconds(1));
    if (now.offset <= before.offset) return false;  // not a spring forward
    for (absl::CivilSecond w = before.cs + 1; w < now.cs; w += 1) {
      if (MatchesWall(w)) return true;
    }
    return false;
  }

  // The first fire time in (after, after + limit], or nullopt if there is none.
  std::optional<absl::Time> NextWithin(absl::Time after,
                                       absl::Duration limit) const {
    const int64_t step = absl::ToInt64Seconds(this->step());
    int64_t s = absl::ToUnixSeconds(after) + 1;  // ToUnixSeconds rounds down
    while (s % step != 0) ++s;
    for (absl::Time t = absl::FromUnixSeconds(s); t - after <= limit;
         t += this->step()) {
      if (Fires(t)) return t;
    }
    return std::nullopt;
  }

  // The last fire time in [before - limit, before), or nullopt if there is
  // none.
  std::optional<absl::Time> PrevWithin(absl::Time before,
                                       absl::Duration limit) const {
    const int64_t step = absl::ToInt64Seconds(this->step());
    int64_t s = absl::ToUnixSeconds(before);
    if (absl::FromUnixSeconds(s) == before) --s;  // strictly before
    while (s % step != 0) --s;
    for (absl::Time t = absl::FromUnixSeconds(s); before - t <= limit;
         t -= this->step()) {
      if (Fires(t)) return t;
    }
    return std::nullopt;
  }

  // Whether date `d` matches the day-of-month, month, day-of-week and year
  // fields.
  bool MatchesDay(absl::CivilDay d) const {
    if (d.year() < 1970 || d.year() > 2399) return false;
    return years_[d.year()] && months_[d.month()] && DayMatches(d);
  }

  // Whether some day from 1970 to 2399 matches.
  bool AnyDayMatches() const {
    for (absl::CivilDay d(1970, 1, 1); d.year() <= 2399; ++d) {
      if (MatchesDay(d)) return true;
    }
    return false;
  }

 private:
  using DayRule = std::function<bool(absl::CivilDay)>;

  static bool Error(std::string* error, std::string what) {
    if (error != nullptr) *error = std::move(what);
    return false;
  }

  // 0 = Sunday ... 6 = Saturday.
  static int Weekday(absl::CivilDay d) {
    switch (absl::GetWeekday(d)) {
      case absl::Weekday::sunday:
        return 0;
      case absl::Weekday::monday:
        return 1;
      case absl::Weekday::tuesday:
        return 2;
      case absl::Weekday::wednesday:
        return 3;
      case absl::Weekday::thursday:
        return 4;
      case absl::Weekday::friday:
        return 5;
      case absl::Weekday::saturday:
        return 6;
    }
    return -1;
  }

  static bool IsWeekday(absl::CivilDay d) {
    return Weekday(d) >= 1 && Weekday(d) <= 5;
  }

  static int DaysInMonth(absl::CivilDay d) {
    return (absl::CivilDay(absl::CivilMonth(d) + 1) - 1).day();
  }

  // The first pass of a repeated wall time is the earlier of its two instants.
  bool IsSecondPass(absl::Time t, absl::CivilSecond wall) const {
    const absl::TimeZone::TimeInfo info = zone_.At(wall);
    return info.kind == absl::TimeZone::TimeInfo::REPEATED &&
           t != std::min(info.pre, info.post);
  }

  // The minute step would miss fire times in a zone whose offset is not whole
  // minutes.
  void CheckWholeMinutes(const absl::TimeZone::CivilInfo& info) const {
    if (minute_steps_ && info.offset % 60 != 0) {
      std::fprintf(
          stderr, "ReferenceCron: %s has an offset that is not whole minutes\n",
          zone_.name().c_str());
      std::abort();
    }
  }

  bool DayMatches(absl::CivilDay d) const {
    bool dom = false, dow = false;
    for (const DayRule& rule : dom_rules_) dom = dom || rule(d);
    for (const DayRule& rule : dow_rules_) dow = dow || rule(d);
    if (dom_restricted_ && dow_restricted_) {
      return options_.day_match_all ? (dom && dow) : (dom || dow);
    }
    return dom && dow;
  }

  // A number, or (when `names` is given) a name from `names`, whose index +
  // name_base is its value.
  static bool ParseValue(absl::string_view text,
                         const std::vector<std::string>& names, int name_base,
                         int* out) {
    if (absl::SimpleAtoi(text, out)) {
      return !text.empty() && absl::ascii_isdigit(text[0]);  // not "+5"
    }
    for (size_t i = 0; i < names.size(); ++i) {
      if (absl::EqualsIgnoreCase(text, names[i])) {
        *out = static_cast<int>(i) + name_base;
        return true;
      }
    }
    return false;
  }

  // The values of one item `*`, `*/s`, `a`, `a-b`, `a/s` or `a-b/s` of a field
  // whose values are lo..hi. A range with b < a wraps from hi to lo (cyclic
  // fields only). Values are visited from a; every s-th one is taken.
  static bool ExpandItem(absl::string_view item, int lo, int hi, bool cyclic,
                         const std::vector<std::string>& names, int name_base,
                         std::vector<int>* out) {
    int step = 1;
    const size_t slash = item.find('/');
    if (slash != absl::string_view::npos) {
      if (!absl::SimpleAtoi(item.substr(slash + 1), &step) || step < 1 ||
          step > hi - lo + 1) {
        return false;
      }
      item = item.substr(0, slash);
    }
    int first = lo, last = hi;
    if (item == "*" || item == "?") {
      // the whole field
    } else if (const size_t dash = item.find('-');
               dash != absl::string_view::npos) {
      if (!ParseValue(item.substr(0, dash), names, name_base, &first) ||
          !ParseValue(item.substr(dash + 1), names, name_base, &last)) {
        return false;
      }
    } else {
      if (!ParseValue(item, names, name_base, &first)) return false;
      // `a/s` runs to the end of the field.
      last = slash == absl::string_view::npos ? first : hi;
    }
    if (first < lo || first > hi || last < lo || last > hi) return false;
    if (last < first && !cyclic) return false;
    int v = first;
    for (int count = 0;; ++count) {
      if (count % step == 0) out->push_back(v);
      if (v == last) break;
      v = v == hi ? lo : v + 1;
    }
    return true;
  }

  // A comma-separated list of items, as a membership table indexed by value.
  static bool ParseSet(absl::string_view text, int lo, int hi, bool cyclic,
                       const std::vector<std::string>& names,
                       std::vector<bool>* set, std::string* error) {
    set->assign(hi + 1, false);
    for (absl::string_view item : absl::StrSplit(text, ',')) {
      std::vector<int> values;
      if (!ExpandItem(item, lo, hi, cyclic, names, lo, &values)) {
        return Error(error, "cannot read \"" + std::string(item) + "\"");
      }
      for (int v : values) (*set)[v] = true;
    }
    return true;
  }

  bool ParseDayOfMonth(absl::string_view text, std::string* error) {
    for (absl::string_view item : absl::StrSplit(text, ',')) {
      int n = 0;
      if (item == "L") {
        dom_rules_.push_back(
            [](absl::CivilDay d) { return d.day() == DaysInMonth(d); });
      } else if (absl::StartsWith(item, "L-") &&
                 absl::SimpleAtoi(item.substr(2), &n)) {
        dom_rules_.push_back(
            [n](absl::CivilDay d) { return d.day() == DaysInMonth(d) - n; });
      } else if (item == "LW") {
        // The last Monday-Friday of the month.
        dom_rules_.push_back([](absl::CivilDay d) {
          absl::CivilDay last = absl::CivilDay(absl::CivilMonth(d) + 1) - 1;
          while (!IsWeekday(last)) --last;
          return d == last;
        });
      } else if (absl::EndsWith(item, "W") &&
                 absl::SimpleAtoi(item.substr(0, item.size() - 1), &n)) {
        // The Monday-Friday nearest to day n of the same month; none if the
        // month is shorter.
        dom_rules_.push_back([n](absl::CivilDay d) {
          if (n > DaysInMonth(d)) return false;
          const absl::CivilDay target(d.year(), d.month(), n);
          for (int distance = 0; distance <= 3; ++distance) {
            for (const absl::CivilDay c :
                 {target - distance, target + distance}) {
              if (c.month() == d.month() && IsWeekday(c)) return d == c;
            }
          }
          return false;
        });
      } else {
        std::vector<int> values;
        if (!ExpandItem(item, 1, 31, false, {}, 1, &values)) {
          return Error(error, "cannot read \"" + std::string(item) + "\"");
        }
        std::vector<bool> set(32, false);
        for (int v : values) set[v] = true;
        dom_rules_.push_back([set](absl::CivilDay d) { return set[d.day()]; });
      }
    }
    return true;
  }

  bool ParseDayOfWeek(absl::string_view text, std::string* error) {
    static const std::vector<std::string> kDays = {"SUN", "MON", "TUE", "WED",
                                                   "THU", "FRI", "SAT"};
    // Weekdays are written 0-7 (0 and 7 Sunday), or in Quartz 1-7 (1 Sunday);
    // a name counts as its day's number. weekday_of turns a written number
    // into 0 = Sunday ... 6 = Saturday.
    const bool quartz = options_.quartz;
    const int sunday = quartz ? 1 : 0, saturday = quartz ? 7 : 6;
    auto read = [&](absl::string_view t, int* written) {
      int v = 0;
      if (!t.empty() && !absl::ascii_isdigit(t[0]) &&
          ParseValue(t, kDays, 0, &v)) {
        *written = v + sunday;
        return true;
      }
      return ParseValue(t, {}, 0, written) && *written >= sunday &&
             *written <= 7;
    };
    auto weekday_of = [quartz](int written) {
      return quartz ? written - 1 : written % 7;
    };
    auto bad = [&](absl::string_view item) {
      return Error(error, "cannot read \"" + std::string(item) + "\"");
    };

    for (absl::string_view item : absl::StrSplit(text, ',')) {
      int a = 0, k = 0;
      if (const size_t hash = item.find('#'); hash != absl::string_view::npos) {
        if (!read(item.substr(0, hash), &a) ||
            !absl::SimpleAtoi(item.substr(hash + 1), &k)) {
          return bad(item);
        }
        // The k-th such weekday of the month: days 1-7 hold the first, 8-14 the
        // second, ...
        const int w = weekday_of(a);
        dow_rules_.push_back([w, k](absl::CivilDay d) {
          return Weekday(d) == w && (d.day() - 1) / 7 + 1 == k;
        });
        continue;
      }
      if (item.size() > 1 && item.back() == 'L') {
        if (!read(item.substr(0, item.size() - 1), &a)) return bad(item);
        // The last such weekday of the month: a week later is already the next
        // month.
        const int w = weekday_of(a);
        dow_rules_.push_back([w](absl::CivilDay d) {
          return Weekday(d) == w && (d + 7).month() != d.month();
        });
        continue;
      }
      // `*`, `?`, `a`, `a-b`, `a/s`, `a-b/s`, `*/s`.
      int step = 1;
      if (const size_t slash = item.find('/');
          slash != absl::string_view::npos) {
        if (!absl::SimpleAtoi(item.substr(slash + 1), &step) || step < 1) {
          return bad(item);
        }
        item = item.substr(0, slash);
      } else {
        step = 0;  // no step written
      }
      int first = sunday, last = saturday;
      if (item == "*" || item == "?") {
        // the whole week
      } else if (const size_t dash = item.find('-');
                 dash != absl::string_view::npos) {
        if (!read(item.substr(0, dash), &first) ||
            !read(item.substr(dash + 1), &last)) {
          return bad(item);
        }
      } else {
        if (!read(item, &first)) return bad(item);
        // `a/s` runs to the end of the week.
        last = step == 0 ? first : saturday;
      }
      if (step == 0) step = 1;
      std::vector<bool> set(7, false);
      if (first <= last) {
        for (int v = first; v <= last; v += step) set[weekday_of(v)] = true;
      } else {
        // A range that wraps walks round the week, so it passes Sunday once.
        int w = weekday_of(first);
        for (int count = 0;; ++count) {
          if (count % step == 0) set[w] = true;
          if (w == weekday_of(last)) break;
          w = (w + 1) % 7;
        }
      }
      dow_rules_.push_back([set](absl::CivilDay d) { return set[Weekday(d)]; });
    }
    return true;
  }

  ReferenceOptions options_;
  absl::TimeZone zone_;
  std::vector<bool> seconds_, minutes_, hours_, months_, years_;
  std::vector<DayRule> dom_rules_, dow_rules_;
  bool hour_is_wildcard_ = false;
  bool dom_restricted_ = false;
  bool dow_restricted_ = false;
  bool minute_steps_ = false;
};

}  // namespace chime::cron::reference

#endif  // CHIME_SRC_CRON_REFERENCE_CRON_H_
