#include "tests/scenarios/scenario_args.h"

#include <initializer_list>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "src/base/status_macros.h"
#include "src/time/rfc3339.h"

namespace chime::scenarios {
namespace {

absl::Status FieldError(absl::string_view key, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(key, ": ", s.message()));
}

template <typename E>
absl::StatusOr<E> ParseEnum(
    absl::string_view key, absl::string_view text,
    std::initializer_list<std::pair<absl::string_view, E>> names) {
  std::vector<std::string> valid;
  for (const auto& [name, value] : names) {
    if (name == text) return value;
    valid.emplace_back(name);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      key, ": \"", text, "\" is not one of ", absl::StrJoin(valid, ", ")));
}

}  // namespace

// ---------------------------------------------------------------- arguments

absl::StatusOr<CommandArgs> CommandArgs::Parse(absl::string_view line) {
  CommandArgs args;
  size_t i = 0;
  while (true) {
    while (i < line.size() && absl::ascii_isspace(line[i])) ++i;
    if (i == line.size()) break;
    // A word is key=value or a value; quotes may hold spaces (and a quoted
    // '=' is no key).
    std::string word;
    size_t eq = std::string::npos;
    bool quoted = false;
    while (i < line.size() && !absl::ascii_isspace(line[i])) {
      if (line[i] == '=' && eq == std::string::npos && !quoted)
        eq = word.size();
      if (line[i] != '"') {
        word += line[i++];
        continue;
      }
      quoted = true;
      ++i;
      while (i < line.size() && line[i] != '"') {
        if (line[i] == '\\' && i + 1 < line.size()) ++i;
        word += line[i++];
      }
      if (i == line.size())
        return absl::InvalidArgumentError("unterminated quote");
      ++i;
    }
    if (args.command_.empty()) {
      args.command_ = word;
    } else if (eq == std::string::npos) {
      args.words_.push_back({"", word, false});
    } else {
      args.words_.push_back({word.substr(0, eq), word.substr(eq + 1), false});
    }
  }
  return args;
}

std::optional<std::string> CommandArgs::Positional() {
  for (Word& w : words_) {
    if (!w.used && w.key.empty()) {
      w.used = true;
      return w.value;
    }
  }
  return std::nullopt;
}

std::optional<std::string> CommandArgs::Take(absl::string_view key) {
  std::optional<std::string> value;
  for (Word& w : words_) {
    if (!w.used && w.key == key) {
      w.used = true;
      value = w.value;
    }
  }
  return value;
}

absl::StatusOr<std::optional<absl::Duration>> CommandArgs::TakeDuration(
    absl::string_view key) {
  std::optional<std::string> v = Take(key);
  if (!v) return std::optional<absl::Duration>();
  auto d = ParseScenarioDuration(*v);
  if (!d.ok()) return FieldError(key, d.status());
  return std::optional<absl::Duration>(*d);
}

absl::StatusOr<std::optional<int64_t>> CommandArgs::TakeInt(
    absl::string_view key) {
  std::optional<std::string> v = Take(key);
  if (!v) return std::optional<int64_t>();
  int64_t n;
  if (!absl::SimpleAtoi(*v, &n)) {
    return absl::InvalidArgumentError(
        absl::StrCat(key, ": \"", *v, "\" is not an integer"));
  }
  return std::optional<int64_t>(n);
}

absl::StatusOr<std::optional<bool>> CommandArgs::TakeBool(
    absl::string_view key) {
  std::optional<std::string> v = Take(key);
  if (!v) return std::optional<bool>();
  if (*v == "true") return std::optional<bool>(true);
  if (*v == "false") return std::optional<bool>(false);
  return absl::InvalidArgumentError(
      absl::StrCat(key, ": \"", *v, "\" is not true or false"));
}

absl::StatusOr<std::optional<absl::Time>> CommandArgs::TakeTime(
    absl::string_view key) {
  std::optional<std::string> v = Take(key);
  if (!v) return std::optional<absl::Time>();
  auto t = ParseScenarioTime(*v);
  if (!t.ok()) return FieldError(key, t.status());
  return std::optional<absl::Time>(*t);
}

absl::Status CommandArgs::Done() const {
  for (const Word& w : words_) {
    if (w.used) continue;
    if (w.key.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(command_, ": unexpected argument \"", w.value, "\""));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(command_, ": unknown key \"", w.key, "\""));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------- values

absl::StatusOr<absl::Time> ParseScenarioTime(absl::string_view text) {
  auto t = time::ParseRfc3339(text);
  if (!t.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad time \"", text, "\": ", t.status().message()));
  }
  return *t;
}

absl::StatusOr<JobKey> ParseJobKey(absl::string_view text) {
  JobKey key;
  std::vector<std::string> parts = absl::StrSplit(text, '/');
  if (parts.size() == 1) {
    key.id = parts[0];
  } else if (parts.size() == 2) {
    key.name_space = parts[0];
    key.id = parts[1];
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("bad job \"", text, "\": want id or ns/id"));
  }
  return key;
}

absl::StatusOr<ScriptedOutcome> ParseOutcome(absl::string_view text) {
  int code;
  if (text == "timeout")
    return ScriptedOutcome{core::AttemptOutcome::kTimedOut, "timed out"};
  if (text == "cancelled")
    return ScriptedOutcome{core::AttemptOutcome::kCancelled, "cancelled"};
  if (absl::SimpleAtoi(text, &code) && code >= 0) {
    return ScriptedOutcome{code == 0 ? core::AttemptOutcome::kSucceeded
                                     : core::AttemptOutcome::kFailed,
                           absl::StrCat("exit ", code)};
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "bad outcome \"", text, "\": want an exit code, timeout or cancelled"));
}

// ---------------------------------------------------------------- job specs

// Applies the job keys of `args` to `spec` (see docs/scenarios.md, "add-job").
absl::Status ApplyJobArgs(CommandArgs& args, JobSpec* spec) {
  if (auto v = args.Take("ns")) spec->key.name_space = *v;
  if (auto v = args.Take("cron")) {
    spec->trigger.kind = Trigger::Kind::kSchedule;
    spec->trigger.expression = *v;
  }
  if (auto v = args.Take("schedule")) {
    spec->trigger.kind = Trigger::Kind::kSchedule;
    spec->trigger.expression = *v;
  }
  ASSIGN_OR_RETURN(auto at, args.TakeTime("at"));
  if (at) {
    spec->trigger.kind = Trigger::Kind::kAt;
    spec->trigger.at = *at;
  }
  if (auto v = args.Take("tz")) spec->trigger.zone = *v;
  if (auto v = args.Take("dialect")) {
    ASSIGN_OR_RETURN(
        auto d, ParseEnum<cron::Dialect>("dialect", *v,
                                         {{"auto", cron::Dialect::kAuto},
                                          {"vixie", cron::Dialect::kVixie},
                                          {"seconds", cron::Dialect::kSeconds},
                                          {"quartz", cron::Dialect::kQuartz}}));
    spec->trigger.dialect = d;
  }
  if (auto v = args.Take("day-match")) {
    ASSIGN_OR_RETURN(
        auto d, ParseEnum<cron::DayMatch>("day-match", *v,
                                          {{"any", cron::DayMatch::kAny},
                                           {"all", cron::DayMatch::kAll}}));
    spec->trigger.day_match = d;
  }
  if (auto v = args.Take("dst-gap")) {
    ASSIGN_OR_RETURN(
        auto g, ParseEnum<cron::GapPolicy>(
                    "dst-gap", *v,
                    {{"run_at_transition", cron::GapPolicy::kRunAtTransition},
                     {"skip", cron::GapPolicy::kSkip}}));
    spec->trigger.dst.gap = g;
  }
  if (auto v = args.Take("dst-repeat")) {
    ASSIGN_OR_RETURN(auto r, ParseEnum<cron::RepeatPolicy>(
                                 "dst-repeat", *v,
                                 {{"once", cron::RepeatPolicy::kOnce},
                                  {"twice", cron::RepeatPolicy::kTwice}}));
    spec->trigger.dst.repeat = r;
  }
  ASSIGN_OR_RETURN(auto start, args.TakeTime("start"));
  if (start) spec->start = *start;
  ASSIGN_OR_RETURN(auto end, args.TakeTime("end"));
  if (end) spec->end = *end;
  ASSIGN_OR_RETURN(auto jitter, args.TakeDuration("jitter"));
  if (jitter) spec->jitter = *jitter;

  if (auto v = args.Take("misfire")) {
    ASSIGN_OR_RETURN(auto m, ParseEnum<MisfireAction>(
                                 "misfire", *v,
                                 {{"skip", MisfireAction::kSkip},
                                  {"run_once", MisfireAction::kRunOnce},
                                  {"run_all", MisfireAction::kRunAll}}));
    spec->misfire.action = m;
  }
  ASSIGN_OR_RETURN(auto threshold, args.TakeDuration("misfire-threshold"));
  if (threshold) spec->misfire.threshold = *threshold;
  ASSIGN_OR_RETURN(auto max_catchup, args.TakeInt("max-catchup"));
  if (max_catchup) spec->misfire.max_catchup = static_cast<int>(*max_catchup);
  ASSIGN_OR_RETURN(auto window, args.TakeDuration("catchup-window"));
  if (window) spec->misfire.catchup_window = *window;

  if (auto v = args.Take("overlap")) {
    ASSIGN_OR_RETURN(auto o, ParseEnum<OverlapAction>(
                                 "overlap", *v,
                                 {{"allow", OverlapAction::kAllow},
                                  {"skip", OverlapAction::kSkip},
                                  {"buffer_one", OverlapAction::kBufferOne},
                                  {"buffer_all", OverlapAction::kBufferAll},
                                  {"replace", OverlapAction::kReplace}}));
    spec->overlap.action = o;
  }
  ASSIGN_OR_RETURN(auto max_buffered, args.TakeInt("max-buffered"));
  if (max_buffered)
    spec->overlap.max_buffered = static_cast<int>(*max_buffered);

  ASSIGN_OR_RETURN(auto retries, args.TakeInt("retries"));
  if (retries) spec->retry.max_attempts = static_cast<int>(*retries);
  ASSIGN_OR_RETURN(auto max_attempts, args.TakeInt("max-attempts"));
  if (max_attempts) spec->retry.max_attempts = static_cast<int>(*max_attempts);
  ASSIGN_OR_RETURN(auto backoff, args.TakeDuration("backoff"));
  if (backoff) spec->retry.initial_backoff = *backoff;
  if (auto v = args.Take("multiplier")) {
    double m;
    if (!absl::SimpleAtod(*v, &m)) {
      return absl::InvalidArgumentError(
          absl::StrCat("multiplier: \"", *v, "\" is not a number"));
    }
    spec->retry.multiplier = m;
  }
  ASSIGN_OR_RETURN(auto max_backoff, args.TakeDuration("max-backoff"));
  if (max_backoff) spec->retry.max_backoff = *max_backoff;
  ASSIGN_OR_RETURN(auto max_retry_duration,
                   args.TakeDuration("max-retry-duration"));
  if (max_retry_duration) spec->retry.max_retry_duration = *max_retry_duration;
  ASSIGN_OR_RETURN(auto on_failure, args.TakeBool("retry-on-failure"));
  if (on_failure) spec->retry.retry_on_failure = *on_failure;
  ASSIGN_OR_RETURN(auto on_timeout, args.TakeBool("retry-on-timeout"));
  if (on_timeout) spec->retry.retry_on_timeout = *on_timeout;

  ASSIGN_OR_RETURN(auto timeout, args.TakeDuration("timeout"));
  if (timeout) spec->timeout.attempt_timeout = *timeout;
  ASSIGN_OR_RETURN(auto grace, args.TakeDuration("grace"));
  if (grace) spec->timeout.grace = *grace;

  ASSIGN_OR_RETURN(auto priority, args.TakeInt("priority"));
  if (priority) spec->priority = static_cast<int>(*priority);
  if (auto v = args.Take("delivery")) {
    ASSIGN_OR_RETURN(auto d, ParseEnum<Delivery>(
                                 "delivery", *v,
                                 {{"at_most_once", Delivery::kAtMostOnce},
                                  {"at_least_once", Delivery::kAtLeastOnce}}));
    spec->delivery = d;
  }
  ASSIGN_OR_RETURN(auto paused, args.TakeBool("paused"));
  if (paused) spec->paused = *paused;
  return absl::OkStatus();
}

}  // namespace chime::scenarios
