// Schedule expressions: parse once, then ask for fire times.
//
// A `Schedule` is an immutable, parsed schedule expression bound to an IANA
// time zone and a daylight-saving policy. It answers `Next(after)` (the first
// fire time strictly after an instant) and `Prev(before)` (the last one
// strictly before), exactly, in tens of nanoseconds, for any instant in the
// years 1970-2399.
//
//   auto s = chime::cron::Schedule::Parse("0 9 * * MON-FRI", {.zone =
//   "Europe/Berlin"}); if (!s.ok()) { /* s.status().message(): what is wrong,
//   in which field, at which column */ } absl::Time t = s->Next(absl::Now());
//   std::string d = s->Describe();   // "At 09:00, Monday through Friday,
//   Europe/Berlin"
//
// The language (docs/cron.md has every feature with examples):
//   - 5 fields `min hour dom mon dow`; 6 fields `sec min hour dom mon dow`; 7
//   fields add `year`;
//   - `*` `?` lists `a,b` ranges `a-b` (wrapping for cyclic fields: `FRI-MON`,
//   `22-2`), steps
//     `*/5` `10-50/10` `5/15`, names `JAN`-`DEC` `SUN`-`SAT` (any case);
//   - day-of-week 0-7 with 0 and 7 both Sunday; the Quartz dialect uses 1-7
//   with 1 = Sunday;
//   - day-of-month `L`, `L-n`, `LW`, `nW`; day-of-week `dL`, `d#k`;
//   - `H`, `H/15`, `H(0-29)`, `H(0-29)/10`: a value chosen from
//   `ParseOptions::hash_key`;
//   - macros `@yearly @annually @monthly @weekly @daily @midnight @hourly` and
//     `@every <duration>` (`@every 90s`, `@every 1h30m`), phase-anchored at
//     `every_anchor`;
//   - a `CRON_TZ=<zone>` or `TZ=<zone>` prefix, which overrides
//   `ParseOptions::zone`.
//
// Daylight saving (docs/cron.md, "Daylight saving"): a schedule whose hour
// field names fixed hours
// ("0 2 * * *", "30 1,13 * * *") fires a wall time that falls in a
// spring-forward gap once, at the transition instant (or not at all with
// GapPolicy::kSkip), and a wall time in a repeated fall-back hour once, at its
// first occurrence (or in both passes with RepeatPolicy::kTwice). A schedule
// whose hour field starts with `*` ("*/15 * * * *", "0 * * * *", "0 */2 * * *")
// runs in real time: wall times in a gap do not exist, wall times in a repeated
// hour fire in both passes. As in Vixie cron the test is the leading `*`, so "0
// 0-23/2 * * *" names fixed hours.
//
// Thread-safety: a Schedule is immutable; all const methods may be called
// concurrently.
#ifndef CHIME_INCLUDE_CHIME_CRON_H_
#define CHIME_INCLUDE_CHIME_CRON_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"

namespace chime::time {
class ZoneTable;
}

namespace chime::cron {
namespace internal {
struct Matcher;
}

// How the fields are laid out and numbered.
enum class Dialect {
  kAuto,     // inferred: 5 fields -> kVixie, 6 or 7 fields -> kSeconds
  kVixie,    // exactly 5 fields; day-of-week 0-7, 0 and 7 = Sunday
  kSeconds,  // 6 fields (seconds first) or 7 (seconds first, year last);
             // day-of-week as kVixie
  kQuartz,   // as kSeconds, but day-of-week 1-7 with 1 = Sunday
};

// When both day-of-month and day-of-week are restricted (neither starts with
// `*` nor is `?`).
enum class DayMatch {
  kAny,  // a day matches if either field matches (Vixie cron, cronie,
         // robfig/cron, ...)
  kAll,  // a day matches only if both match
};

enum class GapPolicy {
  kRunAtTransition,  // a fixed wall time inside a spring-forward gap fires at
                     // the transition
  kSkip,             // ... does not fire that day
};

enum class RepeatPolicy {
  kOnce,   // a fixed wall time inside a repeated fall-back hour fires at its
           // first occurrence
  kTwice,  // ... fires at both occurrences
};

struct DstPolicy {
  GapPolicy gap = GapPolicy::kRunAtTransition;
  RepeatPolicy repeat = RepeatPolicy::kOnce;
  friend bool operator==(const DstPolicy&, const DstPolicy&) = default;
};

struct ParseOptions {
  Dialect dialect = Dialect::kAuto;
  DayMatch day_match = DayMatch::kAny;
  // IANA zone the fields are evaluated in, unless the expression has a
  // CRON_TZ=/TZ= prefix.
  absl::string_view zone = "UTC";
  // Seed for `H` fields: normally the job's identity, so the choice is stable
  // across restarts and differs between jobs.
  absl::string_view hash_key = "";
  DstPolicy dst;
  // Phase of `@every` schedules: they fire at every_anchor + k * period for
  // integer k.
  absl::Time every_anchor = absl::UnixEpoch();
};

// A change of the zone's UTC offset.
struct OffsetChange {
  absl::Time at;                 // first instant with the new offset
  absl::Duration offset_before;  // east of UTC
  absl::Duration offset_after;
};

// The first and last years fire times are computed for.
inline constexpr int kMinYear = 1970;
inline constexpr int kMaxYear = 2399;

class Schedule {
 public:
  // Parses `expr`. On error returns InvalidArgument whose message names the
  // field, the problem and the 1-based column in `expr`, e.g.
  //   "day-of-month: 32 is outside 1-31 (field 3, column 7)",
  // or NotFound for an unknown time zone. An expression that can never fire ("0
  // 0 30 2 *") is an InvalidArgument error too. Rejecting any input takes
  // microseconds, never a search of centuries.
  static absl::StatusOr<Schedule> Parse(absl::string_view expr,
                                        const ParseOptions& options = {});

  // The first fire time strictly after `after`, or absl::InfiniteFuture() if
  // there is none before the end of kMaxYear. Fire times are whole seconds.
  absl::Time Next(absl::Time after) const;

  // The last fire time strictly before `before`, or absl::InfinitePast() if
  // there is none since the start of kMinYear.
  absl::Time Prev(absl::Time before) const;

  // Up to `n` successive fire times after `after` (fewer if the schedule ends).
  std::vector<absl::Time> NextN(absl::Time after, int n) const;

  // Whether the wall time `t` matches every field (for `@every`: false).
  // Ignores daylight saving: a wall time inside a gap can match although it
  // never occurs.
  bool Matches(absl::CivilSecond t) const;

  // Offset changes of the schedule's zone in (from, to].
  std::vector<OffsetChange> OffsetChangesBetween(absl::Time from,
                                                 absl::Time to) const;

  // An English sentence: "At 09:00, Monday through Friday, Europe/Berlin".
  std::string Describe() const;

  absl::string_view expression() const {
    return absl::string_view(text_).substr(0, expression_size_);
  }
  const std::string& zone_name() const;
  Dialect dialect() const { return dialect_; }  // never kAuto
  DstPolicy dst_policy() const { return dst_; }
  // True for `@every` schedules.
  bool is_interval() const { return every_ms_ > 0; }
  absl::Duration interval() const { return absl::Milliseconds(every_ms_); }
  // True when the hour field starts with `*` (`*`, `*/2`), i.e. the schedule
  // runs in real time across daylight-saving transitions (see the header
  // comment).
  bool hour_is_wildcard() const { return hour_wildcard_; }

  // The matching sets, for callers that want to inspect them (tests, the
  // describer).
  struct Fields {
    uint64_t seconds = 0;  // bit s: second s
    uint64_t minutes = 0;
    uint32_t hours = 0;
    uint32_t dom = 0;               // bit d (1-31): day d
    uint32_t dom_last_offset = 0;   // bit n: `L-n` (n = 0 is `L`)
    uint32_t dom_nearest = 0;       // bit d: `dW`
    bool dom_last_weekday = false;  // `LW`
    bool dom_star =
        true;  // written `*...` or `?`: the day fields combine with AND
    uint16_t months = 0;                  // bit m (1-12)
    uint8_t dow = 0;                      // bit w (0 = Sunday)
    uint8_t dow_last = 0;                 // bit w: `wL`
    std::array<uint8_t, 5> dow_nth = {};  // dow_nth[k-1] bit w: `w#k`
    bool dow_star = true;
    bool all_years = true;
    // Bit (y - kMinYear) of *years: the years that match; null when
    // all_years (kept apart: most schedules name no year).
    std::shared_ptr<const std::array<uint64_t, (kMaxYear - kMinYear) / 64 + 1>>
        years;
  };
  const Fields& fields() const { return fields_; }

 private:
  Schedule() = default;
  friend class Parser;

  internal::Matcher matcher() const;
  int64_t NextAtOrAfter(int64_t from) const;
  int64_t PrevAtOrBefore(int64_t to) const;

  // The key `H` fields were seeded with ("" without `H`).
  absl::string_view hash_key() const {
    return absl::string_view(text_).substr(expression_size_);
  }

  // The expression, then the key its `H` fields were seeded with (kept for
  // Describe(), the only one it changes; none without `H`): one string, as
  // most schedules have no key and a daemon keeps a schedule per job.
  std::string text_;
  uint32_t expression_size_ = 0;
  Fields fields_;
  const chime::time::ZoneTable* zone_ = nullptr;
  Dialect dialect_ = Dialect::kVixie;
  DayMatch day_match_ = DayMatch::kAny;
  DstPolicy dst_;
  bool hour_wildcard_ = false;
  int64_t every_ms_ = 0;
  int64_t every_anchor_ms_ = 0;
  // Precomputed from fields_ for the hot path.
  bool days_unrestricted_ = true;  // every day of every month matches
  bool dom_only_ = false;  // day-of-month alone decides, without weekdays
  bool leap_years_only_ = false;  // only Feb 29 can match
};

}  // namespace chime::cron

#endif  // CHIME_INCLUDE_CHIME_CRON_H_
