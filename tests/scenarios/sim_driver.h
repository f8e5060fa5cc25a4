// SimDriver: drives a core::Plan the way the real driver does, in simulated
// time, with a fake store and a fake executor. The scenario runner
// (scenario_runner.h) and the simulated-year test are built on it.
//
// Time. The driver keeps {wall, mono}. AdvanceBy(d) moves both by d, stopping
// at every instant something happens on the way -- the Plan's wake_at, an
// attempt the fake executor finishes -- and calling the Plan there, exactly as
// a driver sleeping on the monotonic clock would. StepWall(d) moves the wall
// clock alone (NTP, an operator); by default the Plan is told at once, as a
// driver that watches for clock changes (timerfd's TFD_TIMER_CANCEL_ON_SET)
// would; with notify = false it only sees the step at its next wake-up.
//
// The fake store answers every PersistAction in the same instant: OK, or -- as
// set up by FailWrites / SetFenced -- Unavailable (nothing written) or
// FailedPrecondition (fenced). With SetHold(true) it answers nothing until
// Release(). It keeps every durable claim and checks the store's promises: a
// FireKey is claimed at most once (create-if-absent), an attempt is started
// only after its claim is durable, a job's watermark never moves back. A broken
// promise is reported as a line starting "VIOLATION" and counted in
// violations().
//
// The fake executor records every StartAttemptAction as a running attempt --
// or, when it is handed over before its time (a lookahead), as staged until
// then; staged attempts start at their time (reported together in one
// AttemptStarted event) and can be taken back (UnstageAction).
// Attempts finish when the test says (Finish), or by themselves after a
// configured duration, with scripted outcomes (SetExecutorConfig). A forced
// cancel ends the attempt at once ("killed"); a graceful cancel is ignored
// unless the config says the attempt obeys it.
//
// Every action the Plan emits (and every store answer that is not OK) can be
// logged as a line, prefixed with the simulated wall time (see
// docs/scenarios.md for the format).
//
// Thread-safety: not thread-safe; one test thread.
#ifndef CHIME_TESTS_SCENARIOS_SIM_DRIVER_H_
#define CHIME_TESTS_SCENARIOS_SIM_DRIVER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "src/core/plan.h"

namespace chime::scenarios {

// What one attempt of the fake executor ends with.
struct ScriptedOutcome {
  core::AttemptOutcome outcome = core::AttemptOutcome::kSucceeded;
  std::string detail = "exit 0";
};

// How the fake executor treats the attempts of a job (or, as the default, of
// every job).
struct ExecutorConfig {
  // Attempts finish by themselves this long after they start; InfiniteDuration:
  // only when the test says.
  absl::Duration finish_after = absl::InfiniteDuration();
  // Outcomes of successive attempts (of all runs of the job, in start order);
  // when used up, the last one repeats. Empty: success.
  std::vector<ScriptedOutcome> outcomes;
  // A graceful cancel ends the attempt at once (as "cancelled"); otherwise it
  // is ignored, as by a process that traps SIGTERM, until the test finishes the
  // attempt or a forced cancel comes.
  bool obey_graceful_cancel = false;
};

class SimDriver {
 public:
  struct Attempt {
    core::RunId run = 0;
    FireKey fire;
    int attempt = 1;
    absl::Time started_wall;
    MonoTime finish_at = MonoTime::Infinite();
    ScriptedOutcome outcome;  // used when it finishes by itself
    int64_t seq = 0;          // start order
  };

  explicit SimDriver(
      absl::Time wall_start,
      MonoTime mono_start = MonoTime::FromSinceOrigin(absl::Hours(1)));
  ~SimDriver();

  // Plan options; may be changed until the Plan is created (by the first call
  // that needs it).
  core::PlanOptions& options() { return options_; }
  bool plan_created() const { return plan_ != nullptr; }
  // The Plan, created on first use. REQUIRES: the options are valid (aborts
  // otherwise).
  core::Plan& plan();
  core::Now now() const { return now_; }
  // Moves the start. REQUIRES: !plan_created().
  void SetStartTime(absl::Time wall) { now_.wall = wall; }

  // Calls into the Plan and carries out its output: f(now, &output). Returns
  // f's result.
  template <typename F>
  auto Call(F f) {
    core::Output out;
    auto result = f(plan(), now_, &out);
    Process(std::move(out));
    return result;
  }

  // Moves wall and monotonic time forward by d >= 0, waking the Plan on the
  // way. Returns an error if the Plan keeps asking to be woken at the same
  // instant without progress (a livelock), after giving up on that advance.
  absl::Status AdvanceBy(absl::Duration d);
  // Moves wall and monotonic time forward by d >= 0 without waking the Plan on
  // the way -- the scheduler thread was frozen (SIGSTOP, a paused VM, a long
  // GC-like stall) -- then wakes it once. Executor reports that came due
  // meanwhile are delivered first.
  absl::Status Stall(absl::Duration d);
  // Moves the wall clock alone by d (either sign).
  void StepWall(absl::Duration d, bool notify = true);

  // --- the fake store ---
  // The next n persists fail: with kUnavailable (nothing written), or
  // kFailedPrecondition.
  void FailWrites(int n,
                  absl::StatusCode code = absl::StatusCode::kUnavailable);
  // Fenced: every persist from now on is refused (another scheduler holds the
  // lease).
  void SetFenced(bool fenced) { fenced_ = fenced; }
  // Held: persists are not answered until Release().
  void SetHold(bool hold) { hold_ = hold; }
  void Release();
  // Every claim the Plan asked for (durable or not), by run id.
  const std::map<core::RunId, FireKey>& known_runs() const {
    return known_runs_;
  }
  // Every durable claim, in the order written.
  const std::vector<FireKey>& claims() const { return claims_; }
  // Called with every PersistAction as it becomes durable.
  std::function<void(const core::PersistAction&)> on_durable;
  // Called with every action the Plan emits, before it is carried out.
  std::function<void(const core::Action&)> on_action;

  // --- the fake executor ---
  void SetExecutorConfig(const ExecutorConfig& config) {
    default_exec_ = config;
  }
  void SetExecutorConfig(const JobKey& job, const ExecutorConfig& config) {
    job_exec_[job] = config;
  }
  // Running attempts, oldest first.
  std::vector<Attempt> Running() const;
  // Reports the end of attempt `attempt` of `run` (the attempt running now if
  // attempt == 0). NotFound if the run has no running attempt and no attempt
  // number was given.
  absl::Status Finish(core::RunId run, int attempt,
                      const ScriptedOutcome& outcome);

  // --- logging ---
  void set_logging(bool on) { logging_ = on; }
  std::vector<std::string> TakeLines() { return std::exchange(lines_, {}); }
  // Adds a line, prefixed with the wall time.
  void Log(absl::string_view text);
  // Adds a line as it is.
  void Print(std::string line) { lines_.push_back(std::move(line)); }
  int64_t violations() const { return violations_; }
  // The wall time as the log prints it: "07:00:00", with ".250" for
  // milliseconds, and the date in front ("2026-03-08 07:00:00") when it differs
  // from the last one printed.
  std::string Stamp();

 private:
  // Carries out the actions of one Plan call, then delivers every event they
  // cause.
  void Process(core::Output out);
  void Absorb(core::Output& out);
  // Delivers queued events and attempts that finish by themselves now, until
  // none is left.
  void Drain();
  // Starts the staged attempts whose time has come, reporting them in one
  // AttemptStarted event.
  void StartStaged();
  void Run(Attempt a);
  void Answer(const core::PersistAction& p);
  void Violation(absl::string_view what);
  const ExecutorConfig& ExecFor(const JobKey& job) const;
  ScriptedOutcome NextOutcome(const JobKey& job);
  void SetMono(MonoTime m);
  MonoTime NextExecutorDeadline() const;
  std::string FormatAction(const core::Action& action);

  core::PlanOptions options_;
  core::Now now_;
  std::unique_ptr<core::Plan> plan_;
  MonoTime wake_at_ = MonoTime::Infinite();
  std::deque<core::Event> events_;

  // store
  int fail_writes_ = 0;
  absl::StatusCode fail_code_ = absl::StatusCode::kUnavailable;
  bool fenced_ = false;
  bool hold_ = false;
  std::vector<core::PersistAction> held_;
  std::vector<FireKey> claims_;
  std::map<core::RunId, FireKey> known_runs_;
  absl::flat_hash_set<std::string> claimed_ids_;
  absl::flat_hash_set<core::RunId> durable_runs_;
  struct StoredWatermark {
    int64_t generation = 0;
    absl::Time watermark;
    uint64_t batch = 0;  // that wrote it
  };
  absl::flat_hash_map<JobKey, StoredWatermark> watermarks_;

  // executor
  ExecutorConfig default_exec_;
  absl::flat_hash_map<JobKey, ExecutorConfig> job_exec_;
  absl::flat_hash_map<JobKey, size_t> outcome_index_;
  std::map<int64_t, Attempt> running_;  // by seq
  // Attempts handed over before their time, by start time (then hand-over
  // order).
  std::multimap<MonoTime, Attempt> staged_;
  int64_t next_seq_ = 0;

  // log
  bool logging_ = true;
  std::vector<std::string> lines_;
  absl::CivilDay last_day_printed_ = absl::CivilDay(1, 1, 1);
  bool day_printed_ = false;
  int64_t violations_ = 0;
};

// Durations as scenarios write them: "90s", "12m", "1h30m", "250ms", "1.5s",
// "2d", "-1h", "0", and "inf" for absl::InfiniteDuration().
absl::StatusOr<absl::Duration> ParseScenarioDuration(absl::string_view text);

}  // namespace chime::scenarios

#endif  // CHIME_TESTS_SCENARIOS_SIM_DRIVER_H_
