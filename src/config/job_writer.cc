#include "src/config/job_writer.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/config/yaml_writer.h"
#include "src/time/rfc3339.h"

namespace chime::config {
namespace {

using Json = nlohmann::ordered_json;

// The names the reader accepts (job_fields.cc has the same tables, the other
// way round; the round-trip tests keep the two in step).
template <typename E>
struct Name {
  E value;
  absl::string_view name;
};
constexpr Name<cron::Dialect> kDialects[] = {
    {cron::Dialect::kAuto, "auto"},
    {cron::Dialect::kVixie, "vixie"},
    {cron::Dialect::kSeconds, "seconds"},
    {cron::Dialect::kQuartz, "quartz"}};
constexpr Name<cron::DayMatch> kDayMatches[] = {{cron::DayMatch::kAny, "any"},
                                                {cron::DayMatch::kAll, "all"}};
constexpr Name<cron::GapPolicy> kGapPolicies[] = {
    {cron::GapPolicy::kRunAtTransition, "run_at_transition"},
    {cron::GapPolicy::kSkip, "skip"}};
constexpr Name<cron::RepeatPolicy> kRepeatPolicies[] = {
    {cron::RepeatPolicy::kOnce, "once"}, {cron::RepeatPolicy::kTwice, "twice"}};
constexpr Name<MisfireAction> kMisfireActions[] = {
    {MisfireAction::kSkip, "skip"},
    {MisfireAction::kRunOnce, "run_once"},
    {MisfireAction::kRunAll, "run_all"}};
constexpr Name<OverlapAction> kOverlapActions[] = {
    {OverlapAction::kAllow, "allow"},
    {OverlapAction::kSkip, "skip"},
    {OverlapAction::kBufferOne, "buffer_one"},
    {OverlapAction::kBufferAll, "buffer_all"},
    {OverlapAction::kReplace, "replace"}};
constexpr Name<Delivery> kDeliveries[] = {
    {Delivery::kAtMostOnce, "at_most_once"},
    {Delivery::kAtLeastOnce, "at_least_once"}};

// Value writers, one per kind of field: each writes one value to a JsonOut
// (Enum makes the one for an enum).
template <typename E, size_t N>
auto Enum(const Name<E> (&names)[N]) {
  return [&names](JsonOut& out, E value) {
    for (const Name<E>& n : names) {
      if (n.value == value) return out.String(n.name);
    }
    // An enumerator without a name (a cast from a bad integer) is shown as
    // its number, which the reader refuses.
    out.Int(static_cast<int>(value));
  };
}

// "1d2h", "1m30s", "1s500ms", "0s" (not "0", which YAML would type as a
// number), "unlimited". What the reader cannot read (below a millisecond,
// negative, too long) is written so that it refuses it. The units are
// cron's `@every` grammar, which the reader shares.
void Duration(JsonOut& out, absl::Duration d) {
  if (d == absl::InfiniteDuration()) return out.String("unlimited");
  if (d == absl::ZeroDuration()) return out.String("0s");
  int64_t ms = absl::ToInt64Milliseconds(d);
  if (d < absl::ZeroDuration() || absl::Milliseconds(ms) != d) {
    return out.String(absl::FormatDuration(d));
  }
  constexpr std::pair<int64_t, absl::string_view> kUnits[] = {{86'400'000, "d"},
                                                              {3'600'000, "h"},
                                                              {60'000, "m"},
                                                              {1'000, "s"},
                                                              {1, "ms"}};
  std::string text;
  for (const auto& [size, unit] : kUnits) {
    if (ms >= size) {
      absl::StrAppend(&text, ms / size, unit);
      ms %= size;
    }
  }
  out.String(text);
}

void Time(JsonOut& out, absl::Time t) { out.String(time::FormatUtc(t)); }

void Size(JsonOut& out, int64_t bytes) {
  constexpr std::pair<int64_t, absl::string_view> kUnits[] = {
      {int64_t{1} << 30, "GiB"}, {int64_t{1} << 20, "MiB"}, {1024, "KiB"}};
  for (const auto& [size, unit] : kUnits) {
    if (bytes > 0 && bytes % size == 0)
      return out.String(absl::StrCat(bytes / size, unit));
  }
  out.Int(bytes);
}

// A whole multiplier as an integer ("3", not "3.0").
void Number(JsonOut& out, double d) {
  if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) < 0x1p53) {
    return out.Int(static_cast<int64_t>(d));
  }
  out.Double(d);
}

// "200-299"; 409 for a range of one.
void Statuses(JsonOut& out, const std::vector<std::pair<int, int>>& ranges) {
  out.BeginArray();
  for (const auto& [lo, hi] : ranges) {
    if (lo == hi) {
      out.Int(lo);
    } else {
      out.String(absl::StrCat(lo, "-", hi));
    }
  }
  out.EndArray();
}

// The plain values, as nlohmann would convert them.
void Plain(JsonOut& out, const std::string& s) { out.String(s); }
void Plain(JsonOut& out, bool b) { out.Bool(b); }
void Plain(JsonOut& out, int value) { out.Int(value); }
void Plain(JsonOut& out, const std::vector<std::string>& list) {
  out.BeginArray();
  for (const std::string& s : list) out.String(s);
  out.EndArray();
}
void Plain(JsonOut& out, const std::map<std::string, std::string>& map) {
  out.BeginObject();
  for (const auto& [k, v] : map) {
    out.Key(k);
    out.String(v);
  }
  out.EndObject();
}

// Writes one JSON object's members, leaving out what is at its default.
class Object {
 public:
  explicit Object(JsonOut& out) : out_(out) {}
  // Writes `key` as write(out, value) unless `value` equals `default_value`.
  template <typename T, typename Write>
  Object& Put(const char* key, const T& value, const T& default_value,
              Write write) {
    if (!(value == default_value)) {
      out_.Key(key);
      write(out_, value);
    }
    return *this;
  }
  template <typename T>
  Object& Put(const char* key, const T& value, const T& default_value) {
    return Put(key, value, default_value,
               [](JsonOut& out, const T& v) { Plain(out, v); });
  }
  // Writes `key` as an object of what members(out) writes, unless it writes
  // none.
  template <typename Members>
  Object& PutObject(const char* key, Members members) {
    out_.Key(key);
    out_.BeginObject();
    members(out_);
    out_.EndObjectOrDropIfEmpty();
    return *this;
  }

 private:
  JsonOut& out_;
};

void Misfire(JsonOut& out, const MisfirePolicy& m) {
  const MisfirePolicy d;
  Object(out)
      .Put("policy", m.action, d.action, Enum(kMisfireActions))
      .Put("threshold", m.threshold, d.threshold, Duration)
      .Put("max_catchup", m.max_catchup, d.max_catchup)
      .Put("catchup_window", m.catchup_window, d.catchup_window, Duration);
}

void Retry(JsonOut& out, const RetryPolicy& r) {
  const RetryPolicy d;
  Object(out)
      .Put("max_attempts", r.max_attempts, d.max_attempts)
      .Put("initial_backoff", r.initial_backoff, d.initial_backoff, Duration)
      .Put("multiplier", r.multiplier, d.multiplier, Number)
      .Put("max_backoff", r.max_backoff, d.max_backoff, Duration)
      .Put("max_retry_duration", r.max_retry_duration, d.max_retry_duration,
           Duration)
      .Put("on_failure", r.retry_on_failure, d.retry_on_failure)
      .Put("on_timeout", r.retry_on_timeout, d.retry_on_timeout);
}

void Shell(JsonOut& out, const ShellExecutorSpec& s) {
  const ShellExecutorSpec d;
  out.BeginObject();
  Object(out)
      .Put("command", s.command, d.command)
      .Put("argv", s.argv, d.argv)
      .Put("working_dir", s.working_dir, d.working_dir)
      .Put("env", s.env, d.env)
      .Put("user", s.user, d.user)
      .Put("group", s.group, d.group)
      .Put("output_limit", s.output_limit, d.output_limit, Size);
  out.EndObject();
}

void Http(JsonOut& out, const HttpExecutorSpec& h) {
  const HttpExecutorSpec d;
  out.BeginObject();
  Object(out)
      .Put("method", h.method, d.method)
      .Put("url", h.url, d.url)
      .Put("headers", h.headers, d.headers)
      .Put("body", h.body, d.body)
      .Put("verify_tls", h.verify_tls, d.verify_tls)
      .Put("success_statuses", h.success_statuses, d.success_statuses, Statuses)
      .Put("connect_timeout", h.connect_timeout, d.connect_timeout, Duration)
      .Put("response_limit", h.response_limit, d.response_limit, Size);
  out.EndObject();
}

}  // namespace

void WriteJobJson(const JobSpec& spec, JsonOut& out) {
  const JobSpec d;
  const Trigger& t = spec.trigger;
  out.BeginObject();
  Object job(out);
  out.Key("id");
  out.String(spec.key.id);
  job.Put("namespace", spec.key.name_space, d.key.name_space);
  // The trigger always appears. The other kind's field is written only when
  // set, and then the reader refuses the pair (the header explains why).
  if (t.kind == Trigger::Kind::kSchedule ||
      t.expression != d.trigger.expression) {
    out.Key("schedule");
    out.String(t.expression);
  }
  if (t.kind == Trigger::Kind::kAt || t.at != d.trigger.at) {
    out.Key("at");
    Time(out, t.at);
  }
  const cron::DstPolicy& dst = t.dst;
  job.Put("zone", t.zone, d.trigger.zone)
      .Put("dialect", t.dialect, d.trigger.dialect, Enum(kDialects))
      .Put("day_match", t.day_match, d.trigger.day_match, Enum(kDayMatches))
      .PutObject("dst",
                 [&](JsonOut& o) {
                   Object(o)
                       .Put("gap", dst.gap, d.trigger.dst.gap,
                            Enum(kGapPolicies))
                       .Put("repeat", dst.repeat, d.trigger.dst.repeat,
                            Enum(kRepeatPolicies));
                 })
      .Put("start", spec.start, d.start, Time)
      .Put("end", spec.end, d.end, Time)
      .Put("jitter", spec.jitter, d.jitter, Duration)
      .PutObject("misfire", [&](JsonOut& o) { Misfire(o, spec.misfire); })
      .PutObject("overlap",
                 [&](JsonOut& o) {
                   Object(o)
                       .Put("policy", spec.overlap.action, d.overlap.action,
                            Enum(kOverlapActions))
                       .Put("max_buffered", spec.overlap.max_buffered,
                            d.overlap.max_buffered);
                 })
      .PutObject("retry", [&](JsonOut& o) { Retry(o, spec.retry); })
      .PutObject("timeout",
                 [&](JsonOut& o) {
                   Object(o)
                       .Put("attempt", spec.timeout.attempt_timeout,
                            d.timeout.attempt_timeout, Duration)
                       .Put("grace", spec.timeout.grace, d.timeout.grace,
                            Duration);
                 })
      .Put("delivery", spec.delivery, d.delivery, Enum(kDeliveries))
      .Put("priority", spec.priority, d.priority)
      .Put("labels", spec.labels, d.labels)
      .Put("paused", spec.paused, d.paused);
  // A function executor has no file form: neither key is written.
  const ExecutorSpec& e = spec.executor;
  if (e.kind != ExecutorSpec::Kind::kFunction) {
    if (e.kind == ExecutorSpec::Kind::kShell || e.shell != d.executor.shell) {
      out.Key("shell");
      Shell(out, e.shell);
    }
    if (e.kind == ExecutorSpec::Kind::kHttp || e.http != d.executor.http) {
      out.Key("http");
      Http(out, e.http);
    }
  }
  out.EndObject();
}

Json JobToJson(const JobSpec& spec) {
  Json json;
  JsonTreeOut out(&json);
  WriteJobJson(spec, out);
  return json;
}

std::string JobToYaml(const JobSpec& spec) {
  return internal::WriteYaml(JobToJson(spec));
}

}  // namespace chime::config
