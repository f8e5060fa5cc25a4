#include "src/config/job_fields.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "src/base/status_macros.h"
#include "src/time/zone_table.h"

namespace chime::config::internal {
namespace {

constexpr absl::string_view kJobKeys[] = {
    "id",        "namespace", "schedule", "at",       "zone",     "dialect",
    "day_match", "dst",       "start",    "end",      "jitter",   "misfire",
    "overlap",   "retry",     "timeout",  "delivery", "priority", "labels",
    "paused",    "shell",     "http"};
constexpr absl::string_view kDstKeys[] = {"gap", "repeat"};
constexpr absl::string_view kMisfireKeys[] = {"policy", "threshold",
                                              "max_catchup", "catchup_window"};
constexpr absl::string_view kOverlapKeys[] = {"policy", "max_buffered"};
constexpr absl::string_view kRetryKeys[] = {
    "max_attempts",       "initial_backoff", "multiplier", "max_backoff",
    "max_retry_duration", "on_failure",      "on_timeout"};
constexpr absl::string_view kTimeoutKeys[] = {"attempt", "grace"};
constexpr absl::string_view kShellKeys[] = {
    "command", "argv", "working_dir", "env", "user", "group", "output_limit"};
constexpr absl::string_view kHttpKeys[] = {
    "method",          "url",
    "headers",         "body",
    "verify_tls",      "success_statuses",
    "connect_timeout", "response_limit"};
// Keys that only mean something for a repeating schedule.
constexpr absl::string_view kScheduleOnlyKeys[] = {"zone", "dialect",
                                                   "day_match", "dst"};

constexpr EnumName<cron::Dialect> kDialects[] = {
    {"auto", cron::Dialect::kAuto},
    {"vixie", cron::Dialect::kVixie},
    {"seconds", cron::Dialect::kSeconds},
    {"quartz", cron::Dialect::kQuartz}};
constexpr EnumName<cron::DayMatch> kDayMatches[] = {
    {"any", cron::DayMatch::kAny}, {"all", cron::DayMatch::kAll}};
constexpr EnumName<cron::GapPolicy> kGapPolicies[] = {
    {"run_at_transition", cron::GapPolicy::kRunAtTransition},
    {"skip", cron::GapPolicy::kSkip}};
constexpr EnumName<cron::RepeatPolicy> kRepeatPolicies[] = {
    {"once", cron::RepeatPolicy::kOnce}, {"twice", cron::RepeatPolicy::kTwice}};
constexpr EnumName<MisfireAction> kMisfireActions[] = {
    {"skip", MisfireAction::kSkip},
    {"run_once", MisfireAction::kRunOnce},
    {"run_all", MisfireAction::kRunAll}};
constexpr EnumName<OverlapAction> kOverlapActions[] = {
    {"allow", OverlapAction::kAllow},
    {"skip", OverlapAction::kSkip},
    {"buffer_one", OverlapAction::kBufferOne},
    {"buffer_all", OverlapAction::kBufferAll},
    {"replace", OverlapAction::kReplace}};
constexpr EnumName<Delivery> kDeliveries[] = {
    {"at_most_once", Delivery::kAtMostOnce},
    {"at_least_once", Delivery::kAtLeastOnce}};

// Readers with one parameter, for Set().
absl::StatusOr<absl::Duration> Duration(const Value& v) {
  return ReadDuration(v);
}
absl::StatusOr<absl::Duration> DurationOrUnlimited(const Value& v) {
  return ReadDuration(v, /*allow_unlimited=*/true);
}
absl::StatusOr<int64_t> Int(const Value& v) { return ReadInt(v); }
template <typename E, size_t N>
auto Enum(const EnumName<E> (&names)[N]) {
  return [&names](const Value& v) { return ReadEnum<E>(v, names); };
}

// Reads `v`, when the file has it, with `read` into `*out`.
template <typename T, typename Read>
absl::Status Set(const std::optional<Value>& v, Read read, T* out) {
  if (!v) return absl::OkStatus();
  auto value = read(*v);
  if (!value.ok()) return value.status();
  *out = static_cast<T>(*std::move(value));
  return absl::OkStatus();
}

class JobReader {
 public:
  explicit JobReader(const Value& job) : job_(job) {}

  absl::StatusOr<JobSpec> Read() {
    ASSIGN_OR_RETURN(
        Mapping job,
        Mapping::Read(job_, "a job (a mapping with id, schedule and shell)",
                      kJobKeys));
    std::optional<Value> id = Field(job, "id");
    if (!id)
      return ErrorAt(job_, "missing id (the job's name, e.g. id: backup)");
    RETURN_IF_ERROR(Set(id, ReadString, &spec_.key.id));
    RETURN_IF_ERROR(
        Set(Field(job, "namespace"), ReadString, &spec_.key.name_space));
    RETURN_IF_ERROR(ReadTrigger(job));
    RETURN_IF_ERROR(Set(Field(job, "start"), ReadTime, &spec_.start));
    RETURN_IF_ERROR(Set(Field(job, "end"), ReadTime, &spec_.end));
    RETURN_IF_ERROR(Set(Field(job, "jitter"), Duration, &spec_.jitter));
    RETURN_IF_ERROR(ReadPolicies(job));
    RETURN_IF_ERROR(
        Set(Field(job, "delivery"), Enum(kDeliveries), &spec_.delivery));
    RETURN_IF_ERROR(Set(Field(job, "priority"), Int, &spec_.priority));
    RETURN_IF_ERROR(Set(Field(job, "labels"), ReadStringMap, &spec_.labels));
    RETURN_IF_ERROR(Set(Field(job, "paused"), ReadBool, &spec_.paused));
    RETURN_IF_ERROR(ReadExecutor(job));
    if (absl::Status s = ValidateJobSpec(spec_); !s.ok()) return Locate(s);
    // Read runs once per JobReader.
    return std::move(spec_);
  }

 private:
  // The value under `key`, remembered so that a validation message naming
  // the field can point at it.
  std::optional<Value> Field(const Mapping& m, absl::string_view key) {
    std::optional<Value> v = m.Get(key);
    if (v) {
      absl::string_view path = v->path;
      if (!job_.path.empty()) path.remove_prefix(job_.path.size() + 1);
      marks_[std::string(path)] = v->mark;
    }
    return v;
  }

  absl::Status ReadTrigger(const Mapping& job) {
    std::optional<Value> schedule = Field(job, "schedule");
    std::optional<Value> at = Field(job, "at");
    Trigger& t = spec_.trigger;
    if (schedule && at) {
      return ErrorAt(*at,
                     "a job has schedule (to repeat) or at (to run once), "
                     "not both");
    }
    if (at) {
      for (absl::string_view key : kScheduleOnlyKeys) {
        if (std::optional<Value> v = job.Get(key)) {
          return ErrorAt(*v,
                         "applies only to a schedule; a job with at runs "
                         "once at an absolute time");
        }
      }
      t.kind = Trigger::Kind::kAt;
      return Set(at, ReadTime, &t.at);
    }
    if (!schedule) {
      return ErrorAt(job_,
                     "missing schedule (a cron expression or @every "
                     "interval) or at (a time to run once)");
    }
    t.kind = Trigger::Kind::kSchedule;
    RETURN_IF_ERROR(Set(schedule, ReadString, &t.expression));
    std::optional<Value> zone = Field(job, "zone");
    RETURN_IF_ERROR(Set(zone, ReadString, &t.zone));
    if (zone) {
      // Checked here so that the message points at the zone, not at the
      // schedule that the validator would blame.
      absl::StatusOr<const time::ZoneTable*> table =
          time::ZoneTable::ForName(t.zone);
      if (!table.ok()) return ErrorAt(*zone, table.status().message());
    }
    RETURN_IF_ERROR(Set(Field(job, "dialect"), Enum(kDialects), &t.dialect));
    RETURN_IF_ERROR(
        Set(Field(job, "day_match"), Enum(kDayMatches), &t.day_match));
    if (std::optional<Value> v = Field(job, "dst")) {
      ASSIGN_OR_RETURN(
          Mapping dst,
          Mapping::Read(*v, "a mapping such as {gap: skip, repeat: twice}",
                        kDstKeys));
      RETURN_IF_ERROR(Set(Field(dst, "gap"), Enum(kGapPolicies), &t.dst.gap));
      RETURN_IF_ERROR(
          Set(Field(dst, "repeat"), Enum(kRepeatPolicies), &t.dst.repeat));
    }
    return absl::OkStatus();
  }

  absl::Status ReadPolicies(const Mapping& job) {
    MisfirePolicy& misfire = spec_.misfire;
    if (std::optional<Value> v = Field(job, "misfire")) {
      if (v->node->IsScalar()) {  // misfire: skip
        RETURN_IF_ERROR(Set(v, Enum(kMisfireActions), &misfire.action));
      } else {
        ASSIGN_OR_RETURN(Mapping m,
                         Mapping::Read(*v,
                                       "a misfire policy such as skip or "
                                       "{policy: run_all, max_catchup: 5}",
                                       kMisfireKeys));
        RETURN_IF_ERROR(
            Set(Field(m, "policy"), Enum(kMisfireActions), &misfire.action));
        RETURN_IF_ERROR(Set(Field(m, "threshold"), DurationOrUnlimited,
                            &misfire.threshold));
        RETURN_IF_ERROR(
            Set(Field(m, "max_catchup"), Int, &misfire.max_catchup));
        RETURN_IF_ERROR(Set(Field(m, "catchup_window"), DurationOrUnlimited,
                            &misfire.catchup_window));
      }
    }
    OverlapPolicy& overlap = spec_.overlap;
    if (std::optional<Value> v = Field(job, "overlap")) {
      if (v->node->IsScalar()) {  // overlap: skip
        RETURN_IF_ERROR(Set(v, Enum(kOverlapActions), &overlap.action));
      } else {
        ASSIGN_OR_RETURN(Mapping m,
                         Mapping::Read(*v,
                                       "an overlap policy such as skip or "
                                       "{policy: buffer_all, max_buffered: 10}",
                                       kOverlapKeys));
        RETURN_IF_ERROR(
            Set(Field(m, "policy"), Enum(kOverlapActions), &overlap.action));
        RETURN_IF_ERROR(
            Set(Field(m, "max_buffered"), Int, &overlap.max_buffered));
      }
    }
    RetryPolicy& retry = spec_.retry;
    if (std::optional<Value> v = Field(job, "retry")) {
      ASSIGN_OR_RETURN(
          Mapping m,
          Mapping::Read(*v, "a retry policy such as {max_attempts: 3}",
                        kRetryKeys));
      RETURN_IF_ERROR(Set(Field(m, "max_attempts"), Int, &retry.max_attempts));
      RETURN_IF_ERROR(
          Set(Field(m, "initial_backoff"), Duration, &retry.initial_backoff));
      RETURN_IF_ERROR(
          Set(Field(m, "multiplier"), ReadNumber, &retry.multiplier));
      RETURN_IF_ERROR(Set(Field(m, "max_backoff"), DurationOrUnlimited,
                          &retry.max_backoff));
      RETURN_IF_ERROR(Set(Field(m, "max_retry_duration"), DurationOrUnlimited,
                          &retry.max_retry_duration));
      RETURN_IF_ERROR(
          Set(Field(m, "on_failure"), ReadBool, &retry.retry_on_failure));
      RETURN_IF_ERROR(
          Set(Field(m, "on_timeout"), ReadBool, &retry.retry_on_timeout));
    }
    TimeoutPolicy& timeout = spec_.timeout;
    if (std::optional<Value> v = Field(job, "timeout")) {
      if (v->node->IsScalar()) {  // timeout: 10m
        RETURN_IF_ERROR(Set(v, DurationOrUnlimited, &timeout.attempt_timeout));
      } else {
        ASSIGN_OR_RETURN(Mapping m, Mapping::Read(*v,
                                                  "a timeout such as 10m or "
                                                  "{attempt: 10m, grace: 30s}",
                                                  kTimeoutKeys));
        RETURN_IF_ERROR(Set(Field(m, "attempt"), DurationOrUnlimited,
                            &timeout.attempt_timeout));
        RETURN_IF_ERROR(
            Set(Field(m, "grace"), DurationOrUnlimited, &timeout.grace));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReadExecutor(const Mapping& job) {
    std::optional<Value> shell = Field(job, "shell");
    std::optional<Value> http = Field(job, "http");
    if (shell && http) {
      const Value& second = shell->mark.pos > http->mark.pos ? *shell : *http;
      return ErrorAt(second, "a job has one executor, shell or http, not both");
    }
    if (shell) return ReadShell(*shell);
    if (http) return ReadHttp(*http);
    return ErrorAt(job_,
                   "missing executor: shell (a command to run) or http "
                   "(a request to make)");
  }

  absl::Status ReadShell(const Value& v) {
    spec_.executor.kind = ExecutorSpec::Kind::kShell;
    ShellExecutorSpec& shell = spec_.executor.shell;
    if (v.node->IsScalar()) return Set(v, ReadString, &shell.command);
    if (v.node->IsSequence()) return Set(v, ReadStringList, &shell.argv);
    ASSIGN_OR_RETURN(Mapping m,
                     Mapping::Read(v,
                                   "a command, an argv list or a mapping with "
                                   "command or argv",
                                   kShellKeys));
    RETURN_IF_ERROR(Set(Field(m, "command"), ReadString, &shell.command));
    RETURN_IF_ERROR(Set(Field(m, "argv"), ReadStringList, &shell.argv));
    RETURN_IF_ERROR(
        Set(Field(m, "working_dir"), ReadString, &shell.working_dir));
    RETURN_IF_ERROR(Set(Field(m, "env"), ReadStringMap, &shell.env));
    RETURN_IF_ERROR(Set(Field(m, "user"), ReadString, &shell.user));
    RETURN_IF_ERROR(Set(Field(m, "group"), ReadString, &shell.group));
    return Set(Field(m, "output_limit"), ReadSize, &shell.output_limit);
  }

  absl::Status ReadHttp(const Value& v) {
    spec_.executor.kind = ExecutorSpec::Kind::kHttp;
    HttpExecutorSpec& http = spec_.executor.http;
    ASSIGN_OR_RETURN(
        Mapping m,
        Mapping::Read(v, "a mapping with url and method", kHttpKeys));
    RETURN_IF_ERROR(Set(Field(m, "method"), ReadString, &http.method));
    RETURN_IF_ERROR(Set(Field(m, "url"), ReadString, &http.url));
    RETURN_IF_ERROR(Set(Field(m, "headers"), ReadStringMap, &http.headers));
    RETURN_IF_ERROR(Set(Field(m, "body"), ReadString, &http.body));
    RETURN_IF_ERROR(Set(Field(m, "verify_tls"), ReadBool, &http.verify_tls));
    RETURN_IF_ERROR(Set(Field(m, "success_statuses"), ReadStatusRanges,
                        &http.success_statuses));
    RETURN_IF_ERROR(
        Set(Field(m, "connect_timeout"), Duration, &http.connect_timeout));
    return Set(Field(m, "response_limit"), ReadSize, &http.response_limit);
  }

  // Re-addresses a ValidateJobSpec error "<field>: <message>" to the file:
  // the field's name as the file spells it, at the deepest key the file wrote
  // on the way to it (the job itself when it wrote none).
  absl::Status Locate(const absl::Status& invalid) const {
    const absl::string_view message = invalid.message();
    const size_t colon = message.find(": ");
    if (colon == absl::string_view::npos) return ErrorAt(job_, message);
    absl::string_view field = message.substr(0, colon);
    // The validator names fields after the model; the file after its keys.
    std::string name(field);
    if (field == "trigger.schedule") {
      name = "schedule";
    } else if (field == "trigger.at") {
      name = "at";
    } else if (absl::ConsumePrefix(&field, "executor.")) {
      name = std::string(field);
    }
    const std::string path = ChildPath(job_.path, name);
    const absl::string_view rest = message.substr(colon + 2);
    for (std::string key = name; !key.empty();) {
      if (auto it = marks_.find(key); it != marks_.end()) {
        return ErrorAt(it->second, path, rest);
      }
      const size_t dot = key.rfind('.');
      key.resize(dot == std::string::npos ? 0 : dot);
    }
    return ErrorAt(job_.mark, path, rest);
  }

  const Value job_;
  JobSpec spec_;
  // Where the file wrote each field, by path within the job
  // ("retry.max_attempts").
  std::map<std::string, Mark> marks_;
};

}  // namespace

absl::StatusOr<JobSpec> ReadJob(const Value& job) {
  return JobReader(job).Read();
}

}  // namespace chime::config::internal
