#include "cli/cron_command.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/civil_time.h"
#include "nlohmann/json.hpp"
#include "src/time/rfc3339.h"

namespace chime::cli {
namespace {

using cron::DayMatch;
using cron::Dialect;
using cron::GapPolicy;
using cron::RepeatPolicy;
using cron::Schedule;

// Option spellings, shared by the command-line options and the batch "dialect"
// field.
const std::map<std::string, Dialect> kDialects = {
    {"auto", Dialect::kAuto},
    {"vixie", Dialect::kVixie},
    {"seconds", Dialect::kSeconds},
    {"quartz", Dialect::kQuartz}};
const std::map<std::string, DayMatch> kDayMatches = {{"any", DayMatch::kAny},
                                                     {"all", DayMatch::kAll}};
const std::map<std::string, GapPolicy> kGapPolicies = {
    {"run_at_transition", GapPolicy::kRunAtTransition},
    {"skip", GapPolicy::kSkip}};
const std::map<std::string, RepeatPolicy> kRepeatPolicies = {
    {"once", RepeatPolicy::kOnce}, {"twice", RepeatPolicy::kTwice}};

template <typename Enum>
absl::string_view NameOf(const std::map<std::string, Enum>& names, Enum value) {
  for (const auto& [name, v] : names) {
    if (v == value) return name;
  }
  return "?";
}

// JSON text of a value. Strings we did not validate (an expression from argv,
// an engine message quoting one byte of a multi-byte character) may be invalid
// UTF-8: replace, never throw.
std::string Dump(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false,
                nlohmann::ordered_json::error_handler_t::replace);
}

absl::StatusOr<absl::Time> ResolveFrom(const std::optional<std::string>& from,
                                       absl::Time now) {
  if (!from.has_value()) return now;
  auto t = time::ParseRfc3339(*from);
  if (!t.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--from: ", t.status().message()));
  }
  return *t;
}

absl::TimeZone ZoneOf(const Schedule& s) {
  absl::TimeZone zone;
  // The engine already loaded this zone by name, so loading it here cannot
  // fail.
  if (!absl::LoadTimeZone(s.zone_name(), &zone)) zone = absl::UTCTimeZone();
  return zone;
}

// "Sun 2026-03-29 03:00:00 CEST (+02:00)".
std::string FormatLocal(absl::Time t, const absl::TimeZone& zone) {
  return absl::FormatTime("%a %Y-%m-%d %H:%M:%E*S %Z (%Ez)", t, zone);
}

// The fire times, one per line: local time with its offset, then UTC, in
// aligned columns.
void PrintFireTimes(const std::vector<absl::Time>& times,
                    const absl::TimeZone& zone, absl::string_view indent,
                    std::ostream& out) {
  std::vector<std::string> local;
  size_t width = 0;
  for (absl::Time t : times) {
    local.push_back(FormatLocal(t, zone));
    width = std::max(width, local.back().size());
  }
  for (size_t i = 0; i < times.size(); ++i) {
    out << indent << local[i] << std::string(width - local[i].size() + 3, ' ')
        << time::FormatUtc(times[i]) << "\n";
  }
}

// "+02:00", or "+00:53:28" for the odd historical offset.
std::string FormatOffset(int64_t seconds) {
  const char sign = seconds < 0 ? '-' : '+';
  const int64_t a = seconds < 0 ? -seconds : seconds;
  std::string out =
      absl::StrCat(std::string(1, sign), absl::Dec(a / 3600, absl::kZeroPad2),
                   ":", absl::Dec(a / 60 % 60, absl::kZeroPad2));
  if (a % 60 != 0) {
    absl::StrAppend(&out, ":", absl::Dec(a % 60, absl::kZeroPad2));
  }
  return out;
}

// One daylight-saving (or other offset) change, explained against the
// schedule's rules.
class TransitionNote {
 public:
  TransitionNote(const Schedule& s, const absl::TimeZone& zone,
                 const cron::OffsetChange& c)
      : s_(s), zone_(zone), c_(c) {
    before_ = absl::ToInt64Seconds(c.offset_before);
    after_ = absl::ToInt64Seconds(c.offset_after);
    const int64_t at = absl::ToUnixSeconds(c.at);
    const absl::CivilSecond epoch(1970, 1, 1, 0, 0, 0);
    wall_before_ = epoch + (at + before_);
    wall_after_ = epoch + (at + after_);
    // Whole minutes everywhere: say "02:00-02:59"; otherwise show seconds.
    minutes_ = before_ % 60 == 0 && after_ % 60 == 0 && at % 60 == 0;
  }

  std::string Text() const {
    const bool forward = after_ > before_;
    const absl::CivilSecond first = forward ? wall_before_ : wall_after_;
    const absl::CivilSecond end = forward ? wall_after_ : wall_before_;
    const absl::CivilSecond last = end - (minutes_ ? 60 : 1);
    const std::string abbr_before =
        zone_.At(c_.at - absl::Seconds(1)).zone_abbr;
    const std::string abbr_after = zone_.At(c_.at).zone_abbr;

    std::string out = absl::FormatCivilTime(absl::CivilDay(wall_before_));
    absl::StrAppend(&out, " ", Clock(wall_before_), " -> ");
    if (absl::CivilDay(wall_after_) != absl::CivilDay(wall_before_)) {
      absl::StrAppend(&out, absl::FormatCivilTime(absl::CivilDay(wall_after_)),
                      " ");
    }
    absl::StrAppend(&out, Clock(wall_after_), " ", abbr_before, "->",
                    abbr_after, " (", FormatOffset(before_), " -> ",
                    FormatOffset(after_), "): ");
    const std::string range = absl::StrCat(Clock(first), "-", Clock(last));
    absl::StrAppend(
        &out,
        forward ? "clocks spring forward; wall times " : "clocks fall back; ",
        forward ? range : absl::StrCat("wall times ", range),
        forward ? " do not exist; " : " happen twice; ");

    if (s_.is_interval()) {
      absl::StrAppend(
          &out,
          "an @every schedule counts real time, so it is not affected: it "
          "keeps firing every ",
          absl::FormatDuration(s_.interval()));
      return out;
    }
    int total = 0;
    const std::string hits = MatchesIn(first, end, &total);
    const std::string fires =
        absl::StrCat(total == 1 ? "fire at " : "fires at ", hits);
    const cron::DstPolicy policy = s_.dst_policy();
    if (s_.hour_is_wildcard()) {
      absl::StrAppend(&out, "this schedule runs in real time: ");
      if (total == 0) {
        absl::StrAppend(&out, "none of its times falls in ",
                        forward ? "the gap" : "that range",
                        ", so it is unaffected");
      } else if (forward) {
        absl::StrAppend(&out, "its ", fires, " do", total == 1 ? "es" : "",
                        " not happen that day; its other fires are unaffected");
      } else {
        absl::StrAppend(&out, "its ", fires, " happen", total == 1 ? "s" : "",
                        " in both passes, first at ", abbr_before, " (",
                        FormatOffset(before_), ") then at ", abbr_after, " (",
                        FormatOffset(after_), ")");
      }
      return out;
    }
    if (forward) {
      if (policy.gap == GapPolicy::kRunAtTransition) {
        absl::StrAppend(
            &out,
            "this schedule names fixed hours, so a fire in that gap runs at ",
            Clock(wall_after_), " (gap policy run_at_transition)");
      } else {
        absl::StrAppend(
            &out,
            "this schedule names fixed hours, so a fire in that gap does not "
            "run that day (gap policy skip)");
      }
      if (total == 0) {
        absl::StrAppend(
            &out, "; none of its times falls in the gap, so it is unaffected");
      } else if (policy.gap == GapPolicy::kRunAtTransition) {
        absl::StrAppend(&out, ": its ", fires, " run", total == 1 ? "s" : "",
                        " at ", Clock(wall_after_), " ", abbr_after,
                        total > 1 ? ", once" : "");
      } else {
        absl::StrAppend(&out, ": its ", fires, total == 1 ? " is" : " are",
                        " skipped");
      }
      return out;
    }
    if (policy.repeat == RepeatPolicy::kOnce) {
      absl::StrAppend(
          &out,
          "fixed-hour fires in it run once, at the first occurrence (repeat "
          "policy once)");
    } else {
      absl::StrAppend(
          &out,
          "fixed-hour fires in it run at both occurrences (repeat policy "
          "twice)");
    }
    if (total == 0) {
      absl::StrAppend(
          &out, "; this schedule has no fire times in it, so it is unaffected");
    } else if (policy.repeat == RepeatPolicy::kOnce) {
      absl::StrAppend(&out, ": this schedule's ", fires, " run",
                      total == 1 ? "s" : "", " in ", abbr_before, " (",
                      FormatOffset(before_), ") only");
    } else {
      absl::StrAppend(&out, ": this schedule's ", fires, " run",
                      total == 1 ? "s" : "", " in ", abbr_before, " (",
                      FormatOffset(before_), ") and again in ", abbr_after,
                      " (", FormatOffset(after_), ")");
    }
    return out;
  }

 private:
  std::string Clock(absl::CivilSecond t) const {
    return minutes_ ? absl::FormatCivilTime(absl::CivilMinute(t)).substr(11)
                    : absl::FormatCivilTime(t).substr(11);
  }

  // The wall times in [first, end) the schedule's fields match, e.g. "02:00,
  // 02:30 and 3 more"; *total is their number. Scans at most two days of wall
  // time, second by second.
  std::string MatchesIn(absl::CivilSecond first, absl::CivilSecond end,
                        int* total) const {
    constexpr int kShown = 3;
    std::vector<absl::CivilSecond> shown;
    bool seconds = !minutes_;
    *total = 0;
    const absl::CivilSecond stop = std::min(end, first + 2 * 86400);
    for (absl::CivilSecond t = first; t < stop; ++t) {
      if (!s_.Matches(t)) continue;
      if (t.second() != 0) seconds = true;
      if (++*total <= kShown) shown.push_back(t);
    }
    // One precision for the whole list: "02:00, 02:15" or "02:00:00, 02:00:10".
    std::vector<std::string> text;
    for (absl::CivilSecond t : shown) {
      text.push_back(seconds ? absl::FormatCivilTime(t).substr(11) : Clock(t));
    }
    if (*total > kShown) {
      return absl::StrCat(absl::StrJoin(text, ", "), " and ", *total - kShown,
                          " more");
    }
    if (text.size() <= 1) return absl::StrJoin(text, "");
    return absl::StrCat(absl::StrJoin(text.begin(), text.end() - 1, ", "),
                        " and ", text.back());
  }

  const Schedule& s_;
  const absl::TimeZone& zone_;
  const cron::OffsetChange& c_;
  int64_t before_ = 0;
  int64_t after_ = 0;
  absl::CivilSecond wall_before_;
  absl::CivilSecond wall_after_;
  bool minutes_ = true;
};

// Accepts one of the names (any case) and hands CLI11 the enum's number to
// store.
template <typename Enum>
CLI::Validator OneOf(const std::map<std::string, Enum>& names) {
  std::vector<std::string> keys;
  for (const auto& [name, value] : names) keys.push_back(name);
  const std::string list = absl::StrJoin(keys, "|");
  return CLI::Validator(
      [&names, list](std::string& input) -> std::string {
        const auto it = names.find(absl::AsciiStrToLower(input));
        if (it == names.end()) {
          return absl::StrCat("\"", input, "\" is not one of ", list);
        }
        input = std::to_string(static_cast<int>(it->second));
        return "";
      },
      list);
}

void AddScheduleOptions(CLI::App* cmd, ScheduleFlags* f) {
  cmd->add_option("--tz", f->tz,
                  "IANA time zone the fields are evaluated in (default UTC); a "
                  "CRON_TZ= or TZ= "
                  "prefix in EXPR overrides it");
  cmd->add_option("--dialect", f->dialect,
                  "vixie (5 fields), seconds (6-7 fields, seconds first) or "
                  "quartz (as seconds, "
                  "day-of-week 1-7 with 1 = Sunday); default: inferred from "
                  "the field count")
      ->transform(OneOf(kDialects));
  cmd->add_option(
         "--day-match", f->day_match,
         "when both day-of-month and day-of-week are restricted, a day matches "
         "if "
         "either matches (any, the default, as in Vixie cron) or both do (all)")
      ->transform(OneOf(kDayMatches));
  cmd->add_option(
         "--dst-gap", f->dst_gap,
         "fixed-hour fire times inside a spring-forward gap: run_at_transition "
         "(default) or skip")
      ->transform(OneOf(kGapPolicies));
  cmd->add_option("--dst-repeat", f->dst_repeat,
                  "fixed-hour fire times inside a repeated fall-back hour: "
                  "once (default, at the "
                  "first occurrence) or twice")
      ->transform(OneOf(kRepeatPolicies));
  cmd->add_option("--hash-key", f->hash_key,
                  "seed for H fields (normally the job's name), default empty");
}

}  // namespace

std::optional<cron::Dialect> DialectFromName(absl::string_view name) {
  const auto it = kDialects.find(std::string(name));
  if (it == kDialects.end()) return std::nullopt;
  return it->second;
}

cron::ParseOptions ScheduleFlags::ToParseOptions() const {
  cron::ParseOptions options;
  options.zone = tz;
  options.dialect = dialect;
  options.day_match = day_match;
  options.dst.gap = dst_gap;
  options.dst.repeat = dst_repeat;
  options.hash_key = hash_key;
  return options;
}

int RunCronNext(const CronNextFlags& flags, const Io& io) {
  auto from = ResolveFrom(flags.from, io.now);
  if (!from.ok()) {
    io.err << "chime: " << from.status().message() << "\n";
    return kExitUsage;
  }
  if (!flags.expr.has_value()) {
    if (!flags.json) {
      io.err << "chime: cron next: missing EXPR (pass --json without EXPR to "
                "read JSON lines "
                "from standard input)\nRun with --help for more information.\n";
      return kExitUsage;
    }
    return RunCronBatch(flags.schedule, *from, flags.n, io.in, io.out);
  }
  auto schedule = Schedule::Parse(*flags.expr, flags.schedule.ToParseOptions());
  if (!schedule.ok()) {
    io.err << "chime: " << schedule.status().message() << "\n";
    return kExitUsage;
  }
  const std::vector<absl::Time> times = schedule->NextN(*from, flags.n);
  if (flags.json) {
    nlohmann::ordered_json j;
    j["expr"] = *flags.expr;
    j["tz"] = schedule->zone_name();
    j["next"] = nlohmann::ordered_json::array();
    for (absl::Time t : times) j["next"].push_back(time::FormatUtc(t));
    io.out << Dump(j) << "\n";
  } else {
    PrintFireTimes(times, ZoneOf(*schedule), "", io.out);
    if (static_cast<int>(times.size()) < flags.n) {
      io.out << "(no more fire times before the end of " << cron::kMaxYear
             << ")\n";
    }
  }
  io.out.flush();
  return io.out.good() ? kExitOk : kExitFailure;
}

int RunCronExplain(const CronExplainFlags& flags, const Io& io) {
  auto from = ResolveFrom(flags.from, io.now);
  if (!from.ok()) {
    io.err << "chime: " << from.status().message() << "\n";
    return kExitUsage;
  }
  auto parsed = Schedule::Parse(flags.expr, flags.schedule.ToParseOptions());
  if (!parsed.ok()) {
    io.err << "chime: " << parsed.status().message() << "\n";
    return kExitUsage;
  }
  const Schedule& s = *parsed;
  const absl::TimeZone zone = ZoneOf(s);
  std::ostream& out = io.out;
  out << "Expression:  " << s.expression() << "\n";
  out << "Meaning:     " << s.Describe() << "\n";
  out << "Time zone:   " << s.zone_name() << "\n";
  if (s.is_interval()) {
    out << "Kind:        every " << absl::FormatDuration(s.interval())
        << " of real time; daylight saving does not affect it\n";
  } else {
    out << "Dialect:     " << NameOf(kDialects, s.dialect()) << "\n";
    const cron::DstPolicy p = s.dst_policy();
    if (s.hour_is_wildcard()) {
      out << "DST rule:    the hour field starts with *, so the schedule runs "
             "in real time across daylight-saving changes\n";
    } else {
      out << "DST rule:    the hour field names fixed hours; gap policy "
          << NameOf(kGapPolicies, p.gap) << ", repeat policy "
          << NameOf(kRepeatPolicies, p.repeat) << "\n";
    }
  }
  const std::vector<absl::Time> times = s.NextN(*from, flags.n);
  out << "Next " << times.size() << " fire time"
      << (times.size() == 1 ? "" : "s") << " after " << time::FormatUtc(*from)
      << ":\n";
  PrintFireTimes(times, zone, "  ", out);
  if (static_cast<int>(times.size()) < flags.n) {
    out << "  (no more fire times before the end of " << cron::kMaxYear
        << ")\n";
  }
  const std::vector<cron::OffsetChange> changes =
      times.empty() ? std::vector<cron::OffsetChange>{}
                    : s.OffsetChangesBetween(*from, times.back());
  if (changes.empty()) {
    out << "No UTC offset change in " << s.zone_name() << " between "
        << time::FormatUtc(*from) << " and the last fire time.\n";
  } else {
    out << "UTC offset changes in " << s.zone_name()
        << " up to the last fire time:\n";
    for (const cron::OffsetChange& c : changes) {
      out << "  " << TransitionNote(s, zone, c).Text() << "\n";
    }
  }
  out.flush();
  return out.good() ? kExitOk : kExitFailure;
}

void AddCronCommand(CLI::App& app, const Io& io, int* status) {
  CLI::App* cron =
      app.add_subcommand("cron", "Inspect schedule expressions offline");
  cron->require_subcommand(1);

  auto next = std::make_shared<CronNextFlags>();
  auto next_expr = std::make_shared<std::string>();
  CLI::App* next_cmd = cron->add_subcommand(
      "next",
      "Print the next fire times of EXPR, in its time zone and in UTC. With "
      "--json and no EXPR, "
      "read one JSON case per line from standard input and answer each with "
      "one JSON line "
      "(batch mode): "
      "{\"id\":..,\"expr\":..,\"tz\":..,\"start\":..,\"n\":..,\"dialect\":..} "
      "-> "
      "{\"id\":..,\"next\":[..]} or {\"id\":..,\"error\":..}.");
  CLI::Option* expr_opt = next_cmd->add_option(
      "EXPR", *next_expr,
      "schedule expression, quoted: '30 2 * * *', '@daily', ...");
  AddScheduleOptions(next_cmd, &next->schedule);
  next_cmd->add_option(
      "--from", next->from,
      "list fire times strictly after this RFC 3339 time, e.g. "
      "2026-03-29T00:30:00Z or 2026-03-29T02:30:00+02:00 (default: now)");
  next_cmd->add_option("-n", next->n, "how many fire times (default 5)")
      ->check(CLI::Range(1, kMaxFireTimes));
  next_cmd->add_flag(
      "--json", next->json,
      "print {\"expr\":..,\"tz\":..,\"next\":[UTC times]} on one line");
  next_cmd->footer(
      absl::StrCat("In batch mode, a case that cannot be answered gets an "
                   "\"error\" line and the batch "
                   "goes on; it exits 0 unless output fails. ",
                   kExitStatusHelp));
  next_cmd->callback([next, next_expr, expr_opt, &io, status] {
    if (expr_opt->count() > 0) next->expr = *next_expr;
    *status = RunCronNext(*next, io);
  });

  auto explain = std::make_shared<CronExplainFlags>();
  CLI::App* explain_cmd =
      cron->add_subcommand("explain",
                           "Describe EXPR, list its next fire times, and "
                           "explain each daylight-saving change those "
                           "fire times cross");
  explain_cmd->add_option("EXPR", explain->expr, "schedule expression, quoted")
      ->required();
  AddScheduleOptions(explain_cmd, &explain->schedule);
  explain_cmd->add_option("--from", explain->from,
                          "start after this RFC 3339 time (default: now)");
  explain_cmd->add_option("-n", explain->n, "how many fire times (default 5)")
      ->check(CLI::Range(1, kMaxFireTimes));
  explain_cmd->footer(kExitStatusHelp);
  explain_cmd->callback(
      [explain, &io, status] { *status = RunCronExplain(*explain, io); });
}

}  // namespace chime::cli
