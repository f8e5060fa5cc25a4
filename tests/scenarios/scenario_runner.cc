#include "tests/scenarios/scenario_runner.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "src/base/status_macros.h"
#include "src/time/rfc3339.h"

namespace chime::scenarios {
namespace {

absl::Time DefaultStart() {
  return absl::FromCivil(absl::CivilSecond(2026, 1, 1, 0, 0, 0),
                         absl::UTCTimeZone());
}

}  // namespace

ScenarioRunner::ScenarioRunner() : driver_(DefaultStart()) {
  handlers_ = {
      {"start-time", &ScenarioRunner::StartTime},
      {"options", &ScenarioRunner::Options},
      {"namespace", &ScenarioRunner::Namespace},
      {"executor", &ScenarioRunner::Executor},
      {"add-job", &ScenarioRunner::AddJob},
      {"update-job", &ScenarioRunner::UpdateJob},
      {"remove-job", &ScenarioRunner::RemoveJob},
      {"pause", &ScenarioRunner::Pause},
      {"resume", &ScenarioRunner::Resume},
      {"trigger", &ScenarioRunner::Trigger},
      {"advance", &ScenarioRunner::Advance},
      {"advance-to", &ScenarioRunner::AdvanceTo},
      {"stall", &ScenarioRunner::Stall},
      {"step-wall-clock", &ScenarioRunner::StepWallClock},
      {"run-finished", &ScenarioRunner::RunFinished},
      {"fail-store", &ScenarioRunner::FailStore},
      {"fence-store", &ScenarioRunner::FenceStore},
      {"heal-store", &ScenarioRunner::HealStore},
      {"hold-store", &ScenarioRunner::HoldStore},
      {"release-store", &ScenarioRunner::ReleaseStore},
      {"counters", &ScenarioRunner::Counters},
      {"next-fire", &ScenarioRunner::NextFire},
      {"runs", &ScenarioRunner::Runs},
      {"queue", &ScenarioRunner::Queue},
      {"time", &ScenarioRunner::Time},
  };
}

std::vector<std::string> ScenarioRunner::Run(absl::string_view command) {
  absl::Status status;
  auto args = CommandArgs::Parse(command);
  if (!args.ok()) {
    status = args.status();
  } else {
    auto it = handlers_.find(args->command());
    if (it == handlers_.end()) {
      status = absl::InvalidArgumentError(
          absl::StrCat("unknown command \"", args->command(), "\""));
    } else {
      status = (this->*(it->second))(*args);
    }
  }
  if (!status.ok()) driver_.Print(absl::StrCat("error: ", status.message()));
  return driver_.TakeLines();
}

absl::StatusOr<JobKey> ScenarioRunner::KeyArg(CommandArgs& args) {
  std::optional<std::string> text = args.Positional();
  if (!text)
    return absl::InvalidArgumentError(
        absl::StrCat(args.command(), ": which job?"));
  return ParseJobKey(*text);
}

void ScenarioRunner::PrintJob(const JobKey& key) {
  core::Plan& plan = driver_.plan();
  const absl::Time next = plan.NextFireTime(key);
  Print(absl::StrCat("job ", key.ToString(), ": generation ",
                     plan.Generation(key), ", next fire ",
                     next == absl::InfiniteFuture() ? std::string("none")
                                                    : time::FormatUtc(next),
                     specs_[key].paused ? " (paused)" : ""));
}

absl::Status ScenarioRunner::StartTime(CommandArgs& args) {
  if (driver_.plan_created()) {
    return absl::FailedPreconditionError(
        "start-time must come before anything that runs the Plan");
  }
  std::optional<std::string> text = args.Positional();
  if (!text) return absl::InvalidArgumentError("start-time: which time?");
  ASSIGN_OR_RETURN(auto t, ParseScenarioTime(*text));
  if (absl::Status s = args.Done(); !s.ok()) return s;
  driver_.SetStartTime(t);
  return absl::OkStatus();
}

absl::Status ScenarioRunner::Options(CommandArgs& args) {
  if (driver_.plan_created()) {
    return absl::FailedPreconditionError(
        "options must come before anything that runs the Plan");
  }
  core::PlanOptions& o = driver_.options();
  ASSIGN_OR_RETURN(auto limit, args.TakeInt("limit"));
  if (limit) o.max_concurrent_runs = static_cast<int>(*limit);
  ASSIGN_OR_RETURN(auto seed, args.TakeInt("seed"));
  if (seed) o.seed = static_cast<uint64_t>(*seed);
  ASSIGN_OR_RETURN(auto token, args.TakeInt("token"));
  if (token) o.token = *token;
  ASSIGN_OR_RETURN(auto tolerance, args.TakeDuration("step-tolerance"));
  if (tolerance) o.step_tolerance = *tolerance;
  ASSIGN_OR_RETURN(auto persist_retry, args.TakeDuration("persist-retry"));
  if (persist_retry) o.persist_retry = *persist_retry;
  ASSIGN_OR_RETURN(auto lookahead, args.TakeDuration("lookahead"));
  if (lookahead) o.lookahead = *lookahead;
  if (absl::Status s = args.Done(); !s.ok()) return s;
  return core::Plan::ValidateOptions(o);
}

absl::Status ScenarioRunner::Namespace(CommandArgs& args) {
  std::optional<std::string> name = args.Positional();
  if (!name) return absl::InvalidArgumentError("namespace: which namespace?");
  core::NamespaceConfig config;
  if (driver_.plan_created()) {
    config = driver_.options().namespaces.contains(*name)
                 ? driver_.options().namespaces[*name]
                 : core::NamespaceConfig{};
  } else if (auto it = driver_.options().namespaces.find(*name);
             it != driver_.options().namespaces.end()) {
    config = it->second;
  }
  ASSIGN_OR_RETURN(auto weight, args.TakeInt("weight"));
  if (weight) config.weight = static_cast<int>(*weight);
  ASSIGN_OR_RETURN(auto max_concurrent, args.TakeInt("max-concurrent"));
  if (max_concurrent) config.max_concurrent = static_cast<int>(*max_concurrent);
  ASSIGN_OR_RETURN(auto max_starts, args.TakeInt("max-starts-per-minute"));
  if (max_starts) config.max_starts_per_minute = static_cast<int>(*max_starts);
  if (absl::Status s = args.Done(); !s.ok()) return s;
  if (!driver_.plan_created()) {
    core::PlanOptions trial = driver_.options();
    trial.namespaces[*name] = config;
    if (absl::Status s = core::Plan::ValidateOptions(trial); !s.ok()) return s;
    driver_.options() = trial;
    return absl::OkStatus();
  }
  absl::Status s =
      driver_.Call([&](core::Plan& plan, core::Now now, core::Output* out) {
        return plan.ConfigureNamespace(*name, config, now, out);
      });
  if (!s.ok()) return s;
  driver_.options().namespaces[*name] = config;
  return absl::OkStatus();
}

absl::Status ScenarioRunner::Executor(CommandArgs& args) {
  std::optional<JobKey> job;
  if (auto v = args.Take("job")) {
    ASSIGN_OR_RETURN(auto key, ParseJobKey(*v));
    job = key;
  }
  ExecutorConfig config;
  ASSIGN_OR_RETURN(auto finish_after, args.TakeDuration("finish-after"));
  if (finish_after) config.finish_after = *finish_after;
  if (auto v = args.Take("outcomes")) {
    for (absl::string_view word : absl::StrSplit(*v, ',')) {
      ASSIGN_OR_RETURN(auto o, ParseOutcome(word));
      config.outcomes.push_back(o);
    }
  }
  ASSIGN_OR_RETURN(auto obey, args.TakeBool("obey-cancel"));
  if (obey) config.obey_graceful_cancel = *obey;
  if (absl::Status s = args.Done(); !s.ok()) return s;
  if (job) {
    driver_.SetExecutorConfig(*job, config);
  } else {
    driver_.SetExecutorConfig(config);
  }
  return absl::OkStatus();
}

absl::Status ScenarioRunner::Upsert(const JobSpec& spec) {
  absl::Status s =
      driver_.Call([&](core::Plan& plan, core::Now now, core::Output* out) {
        return plan.UpsertJob(spec, now, out);
      });
  if (!s.ok()) return s;
  specs_[spec.key] = spec;
  PrintJob(spec.key);
  return absl::OkStatus();
}

absl::Status ScenarioRunner::AddJob(CommandArgs& args) {
  JobSpec spec;
  std::optional<std::string> id = args.Take("id");
  if (!id) id = args.Positional();
  if (!id) return absl::InvalidArgumentError("add-job: id= is required");
  spec.key.id = *id;
  if (absl::Status s = ApplyJobArgs(args, &spec); !s.ok()) return s;
  if (absl::Status s = args.Done(); !s.ok()) return s;
  if (specs_.contains(spec.key)) {
    return absl::AlreadyExistsError(
        absl::StrCat("job ", spec.key.ToString(), " exists; use update-job"));
  }
  return Upsert(spec);
}

absl::Status ScenarioRunner::UpdateJob(CommandArgs& args) {
  std::optional<std::string> id = args.Take("id");
  if (!id) id = args.Positional();
  if (!id) return absl::InvalidArgumentError("update-job: id= is required");
  JobKey key;
  key.id = *id;
  if (auto ns = args.Take("ns")) key.name_space = *ns;
  auto it = specs_.find(key);
  if (it == specs_.end())
    return absl::NotFoundError(absl::StrCat("no job ", key.ToString()));
  JobSpec spec = it->second;
  if (absl::Status s = ApplyJobArgs(args, &spec); !s.ok()) return s;
  if (absl::Status s = args.Done(); !s.ok()) return s;
  return Upsert(spec);
}

absl::Status ScenarioRunner::RemoveJob(CommandArgs& args) {
  ASSIGN_OR_RETURN(auto key, KeyArg(args));
  if (absl::Status s = args.Done(); !s.ok()) return s;
  absl::Status s =
      driver_.Call([&](core::Plan& plan, core::Now now, core::Output* out) {
        return plan.RemoveJob(key, now, out);
      });
  if (s.ok()) specs_.erase(key);
  return s;
}

absl::Status ScenarioRunner::Pause(CommandArgs& args) {
  ASSIGN_OR_RETURN(auto key, KeyArg(args));
  if (absl::Status s = args.Done(); !s.ok()) return s;
  absl::Status s =
      driver_.Call([&](core::Plan& plan, core::Now now, core::Output* out) {
        return plan.PauseJob(key, now, out);
      });
  if (s.ok()) specs_[key].paused = true;
  return s;
}

absl::Status ScenarioRunner::Resume(CommandArgs& args) {
  ASSIGN_OR_RETURN(auto key, KeyArg(args));
  if (absl::Status s = args.Done(); !s.ok()) return s;
  absl::Status s =
      driver_.Call([&](core::Plan& plan, core::Now now, core::Output* out) {
        return plan.ResumeJob(key, now, out);
      });
  if (!s.ok()) return s;
  specs_[key].paused = false;
  PrintJob(key);
  return absl::OkStatus();
}

absl::Status ScenarioRunner::Trigger(CommandArgs& args) {
  ASSIGN_OR_RETURN(auto key, KeyArg(args));
  if (absl::Status s = args.Done(); !s.ok()) return s;
  absl::StatusOr<core::RunId> run =
      driver_.Call([&](core::Plan& plan, core::Now now, core::Output* out) {
        return plan.TriggerJob(key, now, out);
      });
  return run.status();
}

absl::Status ScenarioRunner::Advance(CommandArgs& args) {
  std::optional<std::string> text = args.Positional();
  if (!text) return absl::InvalidArgumentError("advance: how long?");
  ASSIGN_OR_RETURN(auto d, ParseScenarioDuration(*text));
  std::optional<std::string> flag = args.Positional();
  if (flag && *flag != "quiet") {
    return absl::InvalidArgumentError(
        absl::StrCat("advance: unexpected argument \"", *flag, "\""));
  }
  if (absl::Status s = args.Done(); !s.ok()) return s;
  if (d < absl::ZeroDuration() || d == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        "advance: time only moves forward; use step-wall-clock");
  }
  // quiet: the actions are not printed (see `counters` and `queue` for what
  // happened).
  driver_.set_logging(!flag.has_value());
  absl::Status s = driver_.AdvanceBy(d);
  driver_.set_logging(true);
  return s;
}

absl::Status ScenarioRunner::AdvanceTo(CommandArgs& args) {
  std::optional<std::string> text = args.Positional();
  if (!text) return absl::InvalidArgumentError("advance-to: which time?");
  ASSIGN_OR_RETURN(auto t, ParseScenarioTime(*text));
  if (absl::Status s = args.Done(); !s.ok()) return s;
  if (t < driver_.now().wall) {
    return absl::InvalidArgumentError(
        absl::StrCat("advance-to: ", *text, " is in the past (now ",
                     time::FormatUtc(driver_.now().wall), ")"));
  }
  return driver_.AdvanceBy(t - driver_.now().wall);
}

absl::Status ScenarioRunner::Stall(CommandArgs& args) {
  std::optional<std::string> text = args.Positional();
  if (!text) return absl::InvalidArgumentError("stall: how long?");
  ASSIGN_OR_RETURN(auto d, ParseScenarioDuration(*text));
  if (absl::Status s = args.Done(); !s.ok()) return s;
  if (d < absl::ZeroDuration() || d == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError("stall: time only moves forward");
  }
  return driver_.Stall(d);
}

absl::Status ScenarioRunner::StepWallClock(CommandArgs& args) {
  std::optional<std::string> text = args.Positional();
  if (!text) return absl::InvalidArgumentError("step-wall-clock: by how much?");
  ASSIGN_OR_RETURN(auto d, ParseScenarioDuration(*text));
  ASSIGN_OR_RETURN(auto notify, args.TakeBool("notify"));
  if (absl::Status s = args.Done(); !s.ok()) return s;
  Print(absl::StrCat(
      "wall clock now ", time::FormatUtc(driver_.now().wall + d),
      notify.value_or(true) ? "" : " (the Plan has not been told)"));
  driver_.StepWall(d, notify.value_or(true));
  return absl::OkStatus();
}

absl::Status ScenarioRunner::RunFinished(CommandArgs& args) {
  ASSIGN_OR_RETURN(auto run_arg, args.TakeInt("run"));
  ASSIGN_OR_RETURN(auto attempt, args.TakeInt("attempt"));
  std::optional<std::string> exit = args.Take("exit");
  std::optional<std::string> detail = args.Take("detail");
  core::RunId run = 0;
  if (run_arg) {
    run = static_cast<core::RunId>(*run_arg);
  } else {
    ASSIGN_OR_RETURN(auto key, KeyArg(args));
    for (const SimDriver::Attempt& a : driver_.Running()) {
      if (a.fire.job == key) {
        run = a.run;
        break;
      }
    }
    if (run == 0) {
      return absl::NotFoundError(
          absl::StrCat("job ", key.ToString(), " has no running attempt"));
    }
  }
  if (absl::Status s = args.Done(); !s.ok()) return s;
  ASSIGN_OR_RETURN(auto outcome, ParseOutcome(exit.value_or("0")));
  if (detail) outcome.detail = *detail;
  return driver_.Finish(run, static_cast<int>(attempt.value_or(0)), outcome);
}

absl::Status ScenarioRunner::FailStore(CommandArgs& args) {
  ASSIGN_OR_RETURN(auto writes, args.TakeInt("writes"));
  std::optional<std::string> code = args.Take("code");
  if (absl::Status s = args.Done(); !s.ok()) return s;
  absl::StatusCode c = absl::StatusCode::kUnavailable;
  if (code == "fenced") {
    c = absl::StatusCode::kFailedPrecondition;
  } else if (code.has_value() && code != "unavailable") {
    return absl::InvalidArgumentError(absl::StrCat(
        "code: \"", *code, "\" is not one of unavailable, fenced"));
  }
  driver_.FailWrites(static_cast<int>(writes.value_or(1)), c);
  return absl::OkStatus();
}

absl::Status ScenarioRunner::FenceStore(CommandArgs& args) {
  if (absl::Status s = args.Done(); !s.ok()) return s;
  driver_.SetFenced(true);
  return absl::OkStatus();
}

absl::Status ScenarioRunner::HealStore(CommandArgs& args) {
  if (absl::Status s = args.Done(); !s.ok()) return s;
  driver_.SetFenced(false);
  driver_.FailWrites(0);
  return absl::OkStatus();
}

absl::Status ScenarioRunner::HoldStore(CommandArgs& args) {
  if (absl::Status s = args.Done(); !s.ok()) return s;
  driver_.SetHold(true);
  return absl::OkStatus();
}

absl::Status ScenarioRunner::ReleaseStore(CommandArgs& args) {
  if (absl::Status s = args.Done(); !s.ok()) return s;
  driver_.Release();
  return absl::OkStatus();
}

absl::Status ScenarioRunner::Counters(CommandArgs& args) {
  if (absl::Status s = args.Done(); !s.ok()) return s;
  const core::PlanCounters& c = driver_.plan().counters();
  Print(absl::StrCat("fires_run=", c.fires_run, " succeeded=", c.runs_succeeded,
                     " failed=", c.runs_failed, " cancelled=", c.runs_cancelled,
                     " retries=", c.retries, " timeouts=", c.timeouts,
                     " clock_steps=", c.clock_steps));
  std::map<std::string, int64_t> missed;
  for (const auto& [reason, n] : c.fires_missed) {
    if (n != 0) missed[std::string(core::MissReasonName(reason))] = n;
  }
  std::string line = "missed:";
  if (missed.empty()) line += " none";
  for (const auto& [reason, n] : missed)
    absl::StrAppend(&line, " ", reason, "=", n);
  Print(line);
  if (driver_.violations() > 0)
    Print(absl::StrCat("violations=", driver_.violations()));
  return absl::OkStatus();
}

absl::Status ScenarioRunner::NextFire(CommandArgs& args) {
  ASSIGN_OR_RETURN(auto key, KeyArg(args));
  if (absl::Status s = args.Done(); !s.ok()) return s;
  const absl::Time next = driver_.plan().NextFireTime(key);
  Print(absl::StrCat("next fire ", key.ToString(), " ",
                     next == absl::InfiniteFuture() ? std::string("none")
                                                    : time::FormatUtc(next)));
  return absl::OkStatus();
}

absl::Status ScenarioRunner::Runs(CommandArgs& args) {
  if (absl::Status s = args.Done(); !s.ok()) return s;
  core::Plan& plan = driver_.plan();
  const std::vector<SimDriver::Attempt> running = driver_.Running();
  int listed = 0;
  for (const auto& [run, fire] : driver_.known_runs()) {
    std::optional<core::RunState> state = plan.GetRunState(run);
    if (!state) continue;
    std::string line = absl::StrCat("run ", run, " ", fire.ToString(), " ",
                                    core::RunStateName(*state));
    for (const SimDriver::Attempt& a : running) {
      if (a.run == run) {
        absl::StrAppend(&line, ", executing attempt ", a.attempt, " since ",
                        time::FormatUtc(a.started_wall));
      }
    }
    Print(line);
    ++listed;
  }
  if (listed == 0) Print("no unfinished runs");
  return absl::OkStatus();
}

absl::Status ScenarioRunner::Queue(CommandArgs& args) {
  if (absl::Status s = args.Done(); !s.ok()) return s;
  for (const core::ReadyQueue::NamespaceStats& ns :
       driver_.plan().QueueStats()) {
    Print(absl::StrCat(
        "namespace ", ns.name, ": weight=", ns.config.weight, " pending=",
        ns.pending, " running=", ns.running, " started=", ns.counters.started,
        " delayed_global=", ns.counters.delayed_global,
        " delayed_concurrency=", ns.counters.delayed_ns_concurrency,
        " delayed_rate=", ns.counters.delayed_ns_rate));
  }
  return absl::OkStatus();
}

absl::Status ScenarioRunner::Time(CommandArgs& args) {
  if (absl::Status s = args.Done(); !s.ok()) return s;
  Print(absl::StrCat("now ", time::FormatUtc(driver_.now().wall)));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- files

absl::StatusOr<ScenarioResult> RunScenarioText(absl::string_view text,
                                               absl::string_view name) {
  auto file = ParseScenarioFile(text);
  if (!file.ok()) {
    return absl::Status(file.status().code(),
                        absl::StrCat(name, ": ", file.status().message()));
  }
  ScenarioRunner runner;
  ScenarioResult result;
  std::vector<std::vector<std::string>> outputs;
  for (const ScenarioFile::Piece& piece : file->pieces) {
    if (!piece.scenario_case) continue;
    const ScenarioCase& c = *piece.scenario_case;
    std::vector<std::string> actual =
        runner.Run(absl::StrJoin(c.command_lines, " "));
    // A blank line would end the case early when the file is read back.
    for (std::string& line : actual) {
      if (IsBlankLine(line)) line = "<blank>";
    }
    if (actual != c.expected) {
      absl::StrAppend(&result.diff, name, ":", c.line, ": ",
                      c.command_lines.front(), "\n  (- expected, + actual)\n",
                      LineDiff(c.expected, actual));
    }
    outputs.push_back(std::move(actual));
    ++result.cases;
  }
  result.rewritten = RenderScenarioFile(*file, outputs);
  return result;
}

}  // namespace chime::scenarios
