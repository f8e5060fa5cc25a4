// The words of a scenario command, and the values they hold.
//
// A command line is the command name, then positional values and key=value
// pairs:
//
//   add-job id=a cron="*/5 * * * *" overlap=skip
//   run-finished a exit=1
//
// A value may be double-quoted to hold spaces (a '=' inside quotes is no key;
// `\"` is a quote). A command takes what it understands (Positional, Take*) and
// then calls Done, which names the first argument nobody took: a misspelt key
// is an error, never a silent default.
//
// Thread-safety: value types and pure functions.
#ifndef CHIME_TESTS_SCENARIOS_SCENARIO_ARGS_H_
#define CHIME_TESTS_SCENARIOS_SCENARIO_ARGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "chime/job.h"
#include "tests/scenarios/sim_driver.h"

namespace chime::scenarios {

class CommandArgs {
 public:
  // Splits a command line. InvalidArgument for an unterminated quote.
  static absl::StatusOr<CommandArgs> Parse(absl::string_view line);

  const std::string& command() const { return command_; }

  // The next positional value not taken yet.
  std::optional<std::string> Positional();
  // The value of `key` (the last one if repeated), or nullopt if absent.
  std::optional<std::string> Take(absl::string_view key);
  // Typed values of `key`: nullopt if absent, InvalidArgument naming the key if
  // malformed.
  absl::StatusOr<std::optional<absl::Duration>> TakeDuration(
      absl::string_view key);
  absl::StatusOr<std::optional<int64_t>> TakeInt(absl::string_view key);
  absl::StatusOr<std::optional<bool>> TakeBool(absl::string_view key);
  absl::StatusOr<std::optional<absl::Time>> TakeTime(absl::string_view key);

  // OK, or InvalidArgument naming the first argument not taken.
  absl::Status Done() const;

 private:
  struct Word {
    std::string key;  // empty for a positional value
    std::string value;
    bool used = false;
  };

  std::string command_;
  std::vector<Word> words_;
};

// An RFC 3339 time: "2026-03-29T01:00:00Z", "2026-03-08T02:30:00-05:00".
absl::StatusOr<absl::Time> ParseScenarioTime(absl::string_view text);
// "id" (namespace "default") or "ns/id".
absl::StatusOr<JobKey> ParseJobKey(absl::string_view text);
// How an attempt ends: "0" (success), "N" (exit code N, a failure), "timeout",
// "cancelled".
absl::StatusOr<ScriptedOutcome> ParseOutcome(absl::string_view text);

// Applies the JobSpec keys among `args` to `spec` (docs/scenarios.md, "Jobs"):
// trigger, dates, jitter and every policy. Keys not given leave the field as it
// is.
absl::Status ApplyJobArgs(CommandArgs& args, JobSpec* spec);

}  // namespace chime::scenarios

#endif  // CHIME_TESTS_SCENARIOS_SCENARIO_ARGS_H_
