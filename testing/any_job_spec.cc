#include "testing/any_job_spec.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "rapidcheck.h"

namespace chime::testing {

// Pieces of strings: text that YAML can hold as it is (in a literal block
// when it spans lines), then what it escapes, then what JSON text as dump()
// writes it does not read back (the header of job_writer.h).
const std::vector<std::string>& StringPieces() {
  static const auto* pieces = new std::vector<std::string>{
      "a", "Job", "/usr/bin", "x.y", "0", "1.5", "yes", "No", "null", "~", " ",
      "  ", ":", ": ", "#", " #", "-", "- ", "?", "? ", "*", "&", "!", "|", ">",
      "'", "\"", "\\", "%", "@", "`", ",", "[", "]", "{", "}", "---", "...",
      "=", "<<", "0x1F", "2026-01-01", "\n", "\n\n", "\t", "\u00e9", "\u00a0",
      "\u65e5", "\U0001F600",
      // Escaped:
      "\r", "\r\n", std::string("\0", 1), "\x01", "\x1b", "\ufeff",
      // Not read back from JSON text:
      "\u0085", "\u2028", "\u2029", "\x7f", "\u0080", "\u009f", "\uffff",
      "\ufffe"};
  return *pieces;
}

namespace {

// Uniform in [lo, hi) whatever the size of the case (rapidcheck's inRange
// narrows the range for the early, small cases); shrinks towards lo.
template <typename T>
T Uniform(T lo, T hi) {
  return *rc::gen::resize(rc::kNominalSize, rc::gen::inRange<T>(lo, hi));
}

// 0-5 pieces: a third of the time only text, otherwise any, but only those
// JSON reads back when `json_safe`.
std::string AnyString(bool json_safe) {
  const size_t end = *rc::gen::inRange(0, 3) == 0 ? kTextPieces
                     : json_safe                  ? kJsonPieces
                                                  : StringPieces().size();
  const size_t count = Uniform<size_t>(0, 6);
  std::string out;
  for (size_t i = 0; i < count; ++i) {
    out += StringPieces()[Uniform<size_t>(0, end)];
  }
  return out;
}

std::string NonEmptyString(bool json_safe) {
  std::string s = AnyString(json_safe);
  return s.empty() ? "x" : s;
}

// One character of `first`, then 0-11 of `rest` (names may have 128; longer
// ones add nothing here).
std::string Word(absl::string_view first, absl::string_view rest) {
  std::string out(1, *rc::gen::elementOf(std::string(first)));
  const size_t more = *rc::gen::inRange<size_t>(0, 12);
  for (size_t i = 0; i < more; ++i) {
    out += *rc::gen::elementOf(std::string(rest));
  }
  return out;
}

constexpr absl::string_view kNameChars =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
constexpr absl::string_view kEnvFirst =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_";
constexpr absl::string_view kTokenChars =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    "!#$%&'*+-.^_`|~";

bool Coin() { return *rc::gen::arbitrary<bool>(); }

template <typename T>
T OneOf(std::initializer_list<T> values) {
  return *rc::gen::elementOf(std::vector<T>(values));
}

// Whole milliseconds from 0 (when `min_ms` is 0) up to the reader's 10^15,
// favouring round numbers of each unit.
absl::Duration AnyDuration(int64_t min_ms) {
  constexpr int64_t kMaxMs = 1'000'000'000'000'000;
  const int64_t unit =
      OneOf<int64_t>({1, 1'000, 60'000, 3'600'000, 86'400'000});
  int64_t ms;
  switch (*rc::gen::inRange(0, 3)) {
    case 0:
      ms = unit * *rc::gen::inRange<int64_t>(0, 100);
      break;
    case 1:
      ms = *rc::gen::inRange<int64_t>(0, 100'000'000);
      break;
    default:
      ms = Uniform<int64_t>(0, kMaxMs + 1);
  }
  return absl::Milliseconds(std::max(ms, min_ms));
}

// An instant in the years 0000-9999, to the nanosecond.
absl::Time AnyTime() {
  constexpr int64_t kYear0 = -62'167'219'200, kYear10000 = 253'402'300'800;
  const absl::Time t =
      absl::FromUnixSeconds(Uniform<int64_t>(kYear0, kYear10000));
  return Coin() ? t : t + absl::Nanoseconds(Uniform(0, 1'000'000'000));
}

// Expressions valid in their dialect, with the zones to try them in.
void SetSchedule(Trigger* t) {
  struct Expression {
    cron::Dialect dialect;
    const char* text;
  };
  static const Expression kExpressions[] = {
      {cron::Dialect::kAuto, "*/5 * * * *"},
      {cron::Dialect::kAuto, "0 6 * * MON-FRI"},
      {cron::Dialect::kAuto, "@daily"},
      {cron::Dialect::kAuto, "@every 1h30m"},
      {cron::Dialect::kAuto, "CRON_TZ=Europe/Berlin 30 2 * * *"},
      {cron::Dialect::kAuto, "*/10 * * * * *"},
      {cron::Dialect::kVixie, "30 2 1-7 * 1"},
      {cron::Dialect::kSeconds, "0 30 9 * * MON"},
      {cron::Dialect::kQuartz, "0 0 12 ? * MON#2 *"},
      {cron::Dialect::kQuartz, "0 15 10 L * ?"}};
  const Expression& e = *rc::gen::elementOf(std::vector<Expression>(
      std::begin(kExpressions), std::end(kExpressions)));
  t->kind = Trigger::Kind::kSchedule;
  t->expression = e.text;
  t->dialect = e.dialect;
  if (Coin()) {
    t->zone =
        OneOf<std::string>({"Europe/Berlin", "America/New_York", "Asia/Kolkata",
                            "Australia/Lord_Howe", "Etc/GMT+5"});
  }
  t->day_match = OneOf({cron::DayMatch::kAny, cron::DayMatch::kAll});
  t->dst.gap =
      OneOf({cron::GapPolicy::kRunAtTransition, cron::GapPolicy::kSkip});
  t->dst.repeat =
      OneOf({cron::RepeatPolicy::kOnce, cron::RepeatPolicy::kTwice});
}

void SetPolicies(JobSpec* spec) {
  spec->jitter = Coin() ? AnyDuration(0) : absl::ZeroDuration();
  MisfirePolicy& m = spec->misfire;
  m.action = OneOf(
      {MisfireAction::kSkip, MisfireAction::kRunOnce, MisfireAction::kRunAll});
  if (Coin()) m.threshold = Coin() ? absl::InfiniteDuration() : AnyDuration(0);
  if (Coin()) m.max_catchup = *rc::gen::inRange(1, 1 << 30);
  if (Coin())
    m.catchup_window = Coin() ? absl::InfiniteDuration() : AnyDuration(1);
  spec->overlap.action = OneOf(
      {OverlapAction::kAllow, OverlapAction::kSkip, OverlapAction::kBufferOne,
       OverlapAction::kBufferAll, OverlapAction::kReplace});
  if (Coin()) spec->overlap.max_buffered = *rc::gen::inRange(1, 1 << 30);
  RetryPolicy& r = spec->retry;
  if (Coin()) {
    r.max_attempts = *rc::gen::inRange(1, std::numeric_limits<int>::max());
    absl::Duration a = AnyDuration(0), b = AnyDuration(0);
    if (b < a) std::swap(a, b);
    r.initial_backoff = a;
    r.max_backoff = Coin() ? absl::InfiniteDuration() : b;
    // 1 to 1000: the ends, whole numbers, or in steps of 999 / 2^40.
    constexpr int64_t kSteps = int64_t{1} << 40;
    r.multiplier =
        Coin()
            ? OneOf<double>({1.0, 3.0, 1000.0, 1.0000000000000002})
            : 1 + 999 * (static_cast<double>(Uniform<int64_t>(0, kSteps + 1)) /
                         kSteps);
    r.max_retry_duration = Coin() ? absl::InfiniteDuration() : AnyDuration(1);
    r.retry_on_failure = Coin();
    r.retry_on_timeout = Coin();
  }
  if (Coin()) {
    spec->timeout.attempt_timeout =
        Coin() ? absl::InfiniteDuration() : AnyDuration(1);
    spec->timeout.grace = Coin() ? absl::InfiniteDuration() : AnyDuration(0);
  }
  spec->delivery = OneOf({Delivery::kAtMostOnce, Delivery::kAtLeastOnce});
  spec->priority = *rc::gen::arbitrary<int>();
}

// A size, often a whole number of KiB or MiB, up to the 64 MiB the model
// allows.
int64_t AnySize() {
  const int64_t unit = OneOf<int64_t>({1, 1024, 1 << 20});
  return std::min<int64_t>(unit * *rc::gen::inRange<int64_t>(0, 64 * 1024 + 1),
                           int64_t{64} << 20);
}

void SetExecutor(ExecutorSpec* e, bool json_safe) {
  if (Coin()) {
    e->kind = ExecutorSpec::Kind::kShell;
    ShellExecutorSpec& s = e->shell;
    if (Coin()) {
      s.command = NonEmptyString(json_safe);
    } else {
      s.argv.push_back(NonEmptyString(json_safe));
      const size_t more = *rc::gen::inRange<size_t>(0, 4);
      for (size_t i = 0; i < more; ++i) s.argv.push_back(AnyString(json_safe));
    }
    if (Coin()) s.working_dir = AnyString(json_safe);
    if (Coin()) s.user = AnyString(json_safe);
    if (Coin()) s.group = AnyString(json_safe);
    const size_t vars = *rc::gen::inRange<size_t>(0, 3);
    for (size_t i = 0; i < vars; ++i) {
      s.env[Word(kEnvFirst, absl::StrCat(kEnvFirst, "0123456789"))] =
          AnyString(json_safe);
    }
    if (Coin()) s.output_limit = AnySize();
    return;
  }
  e->kind = ExecutorSpec::Kind::kHttp;
  HttpExecutorSpec& h = e->http;
  if (Coin()) h.method = OneOf<std::string>({"GET", "PUT", "DELETE", "X-Y!"});
  h.url = absl::StrCat(Coin() ? "https://" : "http://", AnyString(json_safe));
  const size_t headers = *rc::gen::inRange<size_t>(0, 3);
  for (size_t i = 0; i < headers; ++i) {
    // Header values may not hold line breaks.
    h.headers[Word(kTokenChars, kTokenChars)] =
        absl::StrReplaceAll(AnyString(json_safe), {{"\r", ""}, {"\n", ""}});
  }
  if (Coin()) h.body = AnyString(json_safe);
  h.verify_tls = Coin();
  const size_t ranges = *rc::gen::inRange<size_t>(0, 4);
  for (size_t i = 0; i < ranges; ++i) {
    const int lo = *rc::gen::inRange(100, 600);
    h.success_statuses.emplace_back(lo,
                                    Coin() ? lo : *rc::gen::inRange(lo, 600));
  }
  if (Coin()) h.connect_timeout = AnyDuration(1);
  if (Coin()) h.response_limit = AnySize();
}

// A valid JobSpec that a job file can express (the file comment).
}  // namespace

JobSpec AnyJobSpec(bool json_safe) {
  JobSpec spec;
  // Valid names that YAML would type or take for an indicator, or any.
  const auto name = [] {
    return *rc::gen::inRange(0, 4) == 0
               ? OneOf<std::string>({"yes", "No", "null", "1.5", "-1", "007",
                                     "0x1F", "1e5", "2026-01-01", "-", "---",
                                     "...", ".inf"})
               : Word(kNameChars, kNameChars);
  };
  spec.key.id = name();
  if (Coin()) spec.key.name_space = name();
  if (Coin()) {
    SetSchedule(&spec.trigger);
  } else {
    spec.trigger.kind = Trigger::Kind::kAt;
    spec.trigger.at = AnyTime();
  }
  if (Coin()) spec.start = AnyTime();
  if (Coin()) {
    spec.end = AnyTime();
    if (spec.end <= spec.start) std::swap(spec.start, spec.end);
    if (spec.end == spec.start) spec.end = absl::InfiniteFuture();
  }
  SetPolicies(&spec);
  const size_t labels = *rc::gen::inRange<size_t>(0, 4);
  for (size_t i = 0; i < labels; ++i) {
    spec.labels[AnyString(json_safe)] = AnyString(json_safe);
  }
  spec.paused = Coin();
  SetExecutor(&spec.executor, json_safe);
  return spec;
}

}  // namespace chime::testing
