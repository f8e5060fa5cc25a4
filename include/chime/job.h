// The job model: what a job is, when it fires, and the policies that decide
// what happens to each fire. Plain value types, shared by the scheduler core,
// the stores, the job files and the API.
//
// A job is identified by `namespace/id`. Each scheduled occurrence of a job is
// a *fire*, keyed by FireKey = (job, generation, scheduled_time): `generation`
// increases whenever the job's trigger changes, so the fires of an old and a
// new schedule never collide, and `scheduled_time` always comes from the
// schedule, never from the clock.
//
// The policies (docs/policies.md has examples):
//   - misfire: a fire found more than `threshold` late (downtime, overload, a
//   clock step) is
//     skipped, run once (the newest; the rest recorded missed) or run all (at
//     most max_catchup); fires older than `catchup_window` are always recorded
//     missed;
//   - overlap: a fire that comes due while the job's previous run is still
//   going is allowed to
//     run beside it, skipped, buffered (one, or up to `max_buffered`), or
//     replaces the running run (graceful cancel, then start);
//   - retry: up to `max_attempts`, exponential backoff with full jitter,
//   bounded by
//     `max_retry_duration`; a run that exhausts them ends `failed` (a dead
//     letter);
//   - timeout: per attempt; graceful cancel, then a forced kill after `grace`;
//   - delivery: at-most-once or at-least-once for runs interrupted by a crash;
//   - priority and namespace: the order in which pending runs get scarce
//   execution slots.
//
// Thread-safety: value types; no shared state.
#ifndef CHIME_INCLUDE_CHIME_JOB_H_
#define CHIME_INCLUDE_CHIME_JOB_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "chime/cron.h"

namespace chime {

// `namespace/id`. Both parts are non-empty and made of [A-Za-z0-9._-].
struct JobKey {
  std::string name_space = "default";
  std::string id;

  // "default/nightly" is written "nightly"; others "ns/id".
  std::string ToString() const;
  friend bool operator==(const JobKey&, const JobKey&) = default;
  friend auto operator<=>(const JobKey&, const JobKey&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const JobKey& k) {
    return H::combine(std::move(h), k.name_space, k.id);
  }
};

// One scheduled occurrence of a job.
struct FireKey {
  JobKey job;
  int64_t generation = 0;
  absl::Time scheduled_time;
  // A run requested by hand ("trigger now"), not by the schedule: its
  // scheduled_time is the request time, and it can never collide with a
  // scheduled fire at the same instant.
  bool manual = false;

  // The readable fire id: "nightly:3:2026-11-29T02:30:00Z"; fractions of a
  // second appear only when non-zero ("ticker:1:2026-11-29T02:30:00.25Z");
  // manual fires end in ":manual".
  std::string ToString() const;
  friend bool operator==(const FireKey&, const FireKey&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const FireKey& k) {
    return H::combine(std::move(h), k.job, k.generation, k.scheduled_time,
                      k.manual);
  }
};

// When a job fires.
struct Trigger {
  enum class Kind {
    kSchedule,  // a cron expression or `@every <duration>` (see chime/cron.h)
    kAt,        // once, at `at`
  };
  Kind kind = Kind::kSchedule;
  std::string expression;  // kSchedule
  std::string zone =
      "UTC";  // kSchedule; a CRON_TZ= prefix in the expression wins
  cron::Dialect dialect = cron::Dialect::kAuto;
  cron::DayMatch day_match = cron::DayMatch::kAny;
  cron::DstPolicy dst;
  absl::Time at = absl::InfinitePast();  // kAt

  friend bool operator==(const Trigger&, const Trigger&) = default;
};

enum class MisfireAction { kSkip, kRunOnce, kRunAll };

struct MisfirePolicy {
  MisfireAction action = MisfireAction::kRunOnce;
  // A fire found this late or later is a misfire; earlier ones just run (late).
  absl::Duration threshold = absl::Minutes(1);
  // kRunAll runs at most this many missed fires (the newest), and records the
  // rest missed.
  int max_catchup = 10;
  // Fires older than this are always recorded missed, whatever the action.
  absl::Duration catchup_window = absl::Hours(24);

  friend bool operator==(const MisfirePolicy&, const MisfirePolicy&) = default;
};

enum class OverlapAction { kAllow, kSkip, kBufferOne, kBufferAll, kReplace };

struct OverlapPolicy {
  OverlapAction action = OverlapAction::kSkip;
  int max_buffered = 100;  // kBufferAll
  friend bool operator==(const OverlapPolicy&, const OverlapPolicy&) = default;
};

struct RetryPolicy {
  int max_attempts = 1;  // 1 = no retry
  absl::Duration initial_backoff = absl::Seconds(1);
  double multiplier = 2.0;
  absl::Duration max_backoff = absl::Minutes(5);
  // No new attempt starts later than this after the first attempt started.
  absl::Duration max_retry_duration = absl::InfiniteDuration();
  bool retry_on_failure =
      true;  // non-zero exit, HTTP status outside the success set, error
  bool retry_on_timeout = true;
  friend bool operator==(const RetryPolicy&, const RetryPolicy&) = default;
};

struct TimeoutPolicy {
  absl::Duration attempt_timeout = absl::InfiniteDuration();
  absl::Duration grace =
      absl::Seconds(10);  // between graceful cancel and forced kill
  friend bool operator==(const TimeoutPolicy&, const TimeoutPolicy&) = default;
};

// What happens to a run that was running when its scheduler died.
enum class Delivery {
  kAtMostOnce,   // marked lost and reported; never started again
  kAtLeastOnce,  // marked lost, then a new attempt with the next attempt number
};

// Runs a command as a child process in its own process group (the daemon's
// shell executor, src/exec/shell_executor.h).
struct ShellExecutorSpec {
  // Exactly one of the two: `argv` runs directly (argv[0] is looked up in PATH
  // when it has no '/'); `command` runs as `/bin/sh -c <command>`.
  std::vector<std::string> argv;
  std::string command;
  std::string working_dir;  // "" = the daemon's
  // Added to the daemon's environment (and overriding it), before the
  // attempt's identity (CHIME_JOB, CHIME_FIRE_ID, ...), which always wins.
  std::map<std::string, std::string> env;
  std::string user;   // name or uid to run as; "" = the daemon's
  std::string group;  // name or gid; "" = the user's primary group
  // Bytes of stdout and stderr (interleaved) kept for the run history: the
  // tail; a dropped head is marked.
  int64_t output_limit = 64 * 1024;

  friend bool operator==(const ShellExecutorSpec&,
                         const ShellExecutorSpec&) = default;
};

// Makes one HTTP request per attempt (the daemon's HTTP executor,
// src/exec/http_executor.h). The attempt's identity goes along as
// `Idempotency-Key: <fire_id>`, `Chime-*` headers and a W3C `traceparent`.
struct HttpExecutorSpec {
  std::string method = "POST";
  std::string url;  // http:// or https://
  std::map<std::string, std::string> headers;
  std::string body;
  bool verify_tls = true;
  // Statuses that count as success, as inclusive ranges; empty = 200-299.
  std::vector<std::pair<int, int>> success_statuses;
  absl::Duration connect_timeout = absl::Seconds(10);
  // Bytes of the response body kept for the run history (the head).
  int64_t response_limit = 64 * 1024;

  friend bool operator==(const HttpExecutorSpec&,
                         const HttpExecutorSpec&) = default;
};

// How a job's attempts are carried out. A job added to the library with a C++
// function needs none (kFunction); the daemon's jobs are shell commands or
// HTTP requests. Changing it does not start a new generation (only the
// trigger does).
struct ExecutorSpec {
  enum class Kind { kFunction, kShell, kHttp };
  Kind kind = Kind::kFunction;
  ShellExecutorSpec shell;  // kShell
  HttpExecutorSpec http;    // kHttp

  friend bool operator==(const ExecutorSpec&, const ExecutorSpec&) = default;
};

struct JobSpec {
  JobKey key;
  Trigger trigger;
  absl::Time start = absl::InfinitePast();  // no fire before this
  absl::Time end = absl::InfiniteFuture();  // no fire after this
  // Each run starts up to this much after its scheduled time, chosen at random
  // per fire; the fire's identity keeps the scheduled time.
  absl::Duration jitter = absl::ZeroDuration();
  MisfirePolicy misfire;
  OverlapPolicy overlap;
  RetryPolicy retry;
  TimeoutPolicy timeout;
  Delivery delivery = Delivery::kAtMostOnce;
  int priority = 0;  // higher runs first when execution slots are scarce
  std::map<std::string, std::string> labels;
  bool paused = false;
  ExecutorSpec executor;
  // Where the job is defined: the path of the job file that declares it (set
  // by the daemon when it loads its jobs directory), or "" for a job created
  // through the REST API or added by a program. The daemon keeps jobs with a
  // source_file equal to their file and refuses to change them through the
  // API; the schedule does not depend on it.
  std::string source_file;

  friend bool operator==(const JobSpec&, const JobSpec&) = default;
};

// Checks a spec on its own (key syntax, policy bounds, the trigger parses). The
// message names the offending field: "retry.max_attempts: 0 is below 1".
absl::Status ValidateJobSpec(const JobSpec& spec);

}  // namespace chime

#endif  // CHIME_INCLUDE_CHIME_JOB_H_
