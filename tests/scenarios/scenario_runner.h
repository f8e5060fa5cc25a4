// The data-driven scenario runner of the scheduler core (docs/scenarios.md has
// the format and every command).
//
// A scenario file is a sequence of cases. Each case is a command (one line,
// possibly continued on the following lines), a line `----`, and the output the
// command is expected to produce, ended by a blank line:
//
//   # A comment.
//   add-job id=a cron="*/5 * * * *" overlap=skip
//   ----
//   job a: generation 1, next fire 2026-01-01T00:05:00Z
//
//   advance 6m
//   ----
//   00:05:00 persist #1 token=1
//     claim a:1:2026-01-01T00:05:00Z run=1
//     watermark a 2026-01-01T00:05:00Z
//   00:05:00 run 1 a:1:2026-01-01T00:05:00Z claiming->pending (claimed)
//   ...
//
// The commands run, in order, against one ScenarioRunner: a core::Plan driven
// by a SimDriver (simulated time, fake store, fake executor). RunScenarioText
// runs a whole file and returns the file as it would be with the actual outputs
// (for --rewrite) and a readable diff of the cases whose output differs.
//
// Thread-safety: not thread-safe.
#ifndef CHIME_TESTS_SCENARIOS_SCENARIO_RUNNER_H_
#define CHIME_TESTS_SCENARIOS_SCENARIO_RUNNER_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chime/job.h"
#include "tests/scenarios/scenario_args.h"
#include "tests/scenarios/scenario_file.h"
#include "tests/scenarios/sim_driver.h"

namespace chime::scenarios {

struct ScenarioResult {
  int cases = 0;
  std::string rewritten;  // the file with the actual outputs
  std::string diff;       // empty when every case matched
};

// Runs every case of a scenario file against a fresh ScenarioRunner. `name`
// prefixes the diff.
absl::StatusOr<ScenarioResult> RunScenarioText(absl::string_view text,
                                               absl::string_view name);

class ScenarioRunner {
 public:
  ScenarioRunner();

  // Runs one command (its lines joined with spaces) and returns the lines it
  // printed: the Plan's actions with their simulated time, the runner's
  // answers, or "error: ...".
  std::vector<std::string> Run(absl::string_view command);

  SimDriver& driver() { return driver_; }

 private:
  using Handler = absl::Status (ScenarioRunner::*)(CommandArgs&);

  absl::Status StartTime(CommandArgs& args);
  absl::Status Options(CommandArgs& args);
  absl::Status Namespace(CommandArgs& args);
  absl::Status Executor(CommandArgs& args);
  absl::Status AddJob(CommandArgs& args);
  absl::Status UpdateJob(CommandArgs& args);
  absl::Status RemoveJob(CommandArgs& args);
  absl::Status Pause(CommandArgs& args);
  absl::Status Resume(CommandArgs& args);
  absl::Status Trigger(CommandArgs& args);
  absl::Status Advance(CommandArgs& args);
  absl::Status AdvanceTo(CommandArgs& args);
  absl::Status Stall(CommandArgs& args);
  absl::Status StepWallClock(CommandArgs& args);
  absl::Status RunFinished(CommandArgs& args);
  absl::Status FailStore(CommandArgs& args);
  absl::Status FenceStore(CommandArgs& args);
  absl::Status HealStore(CommandArgs& args);
  absl::Status HoldStore(CommandArgs& args);
  absl::Status ReleaseStore(CommandArgs& args);
  absl::Status Counters(CommandArgs& args);
  absl::Status NextFire(CommandArgs& args);
  absl::Status Runs(CommandArgs& args);
  absl::Status Queue(CommandArgs& args);
  absl::Status Time(CommandArgs& args);

  absl::Status Upsert(const JobSpec& spec);
  absl::StatusOr<JobKey> KeyArg(CommandArgs& args);
  void Print(std::string line) { driver_.Print(std::move(line)); }
  void PrintJob(const JobKey& key);

  SimDriver driver_;
  std::map<std::string, Handler> handlers_;
  std::map<JobKey, JobSpec> specs_;  // the last spec accepted for each job
};

}  // namespace chime::scenarios

#endif  // CHIME_TESTS_SCENARIOS_SCENARIO_RUNNER_H_
