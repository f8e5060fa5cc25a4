// The Plan's runs, from pending to their outcome: when they may start
// (jitter, lookahead), staging and taking back, starting, finishing,
// retrying. The rest of the Plan is in plan.cc.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/core/plan.h"
#include "src/core/plan_records.h"

namespace chime::core {
namespace {

bool LegalTransition(RunState from, RunState to) {
  switch (from) {
    case RunState::kClaiming:
      return to == RunState::kPending || to == RunState::kCancelled;
    case RunState::kPending:
      return to == RunState::kRunning || to == RunState::kCancelled;
    case RunState::kRunning:
      return to == RunState::kSucceeded || to == RunState::kFailed ||
             to == RunState::kRetrying || to == RunState::kCancelled;
    case RunState::kRetrying:
      return to == RunState::kPending || to == RunState::kCancelled;
    case RunState::kLost:  // recovery, at-least-once (Resume::lost)
      return to == RunState::kRunning || to == RunState::kCancelled ||
             to == RunState::kFailed;  // lost max_losses times
    default:
      return false;  // final states never change
  }
}

}  // namespace

absl::Status Plan::CheckTakeOver(const Resume& resume) const {
  absl::flat_hash_set<RunId> ids;
  for (const std::vector<LostRun>* runs : {&resume.claimed, &resume.lost}) {
    for (const LostRun& r : *runs) {
      if (runs_.contains(r.run) || !ids.insert(r.run).second) {
        return absl::AlreadyExistsError(
            absl::StrCat("run ", r.run, " is in use"));
      }
    }
  }
  return absl::OkStatus();
}

void Plan::TakeOver(Job& job, const Resume& resume, Now now, Output* out) {
  struct Owed {
    const LostRun* stored;
    RunState state;
  };
  std::vector<Owed> owed;
  for (const LostRun& r : resume.claimed)
    owed.push_back({&r, RunState::kPending});
  for (const LostRun& r : resume.lost) owed.push_back({&r, RunState::kLost});
  // The oldest fire first: for a job that runs one at a time, that is the
  // order they start in.
  std::sort(owed.begin(), owed.end(), [](const Owed& a, const Owed& b) {
    return std::pair(a.stored->fire.scheduled_time, a.stored->run) <
           std::pair(b.stored->fire.scheduled_time, b.stored->run);
  });
  for (const Owed& o : owed) {
    auto owned = std::make_unique<Run>();
    Run& run = *owned;
    run.id = o.stored->run;
    run.generation = o.stored->fire.generation;
    run.scheduled_time = o.stored->fire.scheduled_time;
    run.manual = o.stored->fire.manual;
    run.job_slot = job.slot;
    run.state = o.state;
    run.persisted = true;
    run.attempt = o.stored->attempt;
    runs_.emplace(run.id, std::move(owned));
    job.runs.push_back(run.id);
    if (o.state == RunState::kPending && run.generation != job.generation) {
      ++job.active;  // (FinishRun takes it back)
      FinishRun(run, RunState::kCancelled, "schedule changed", now, out);
      continue;
    }
    if (o.state == RunState::kLost && options_.max_losses > 0 &&
        o.stored->losses >= options_.max_losses) {
      ++job.active;  // (FinishRun takes it back)
      FinishRun(run, RunState::kFailed,
                absl::StrCat("lost ", o.stored->losses,
                             " times (its scheduler stopped while it ran); "
                             "not started again, in case the attempt is what "
                             "stops it (max_losses ",
                             options_.max_losses, ")"),
                now, out);
      continue;
    }
    if (o.state == RunState::kPending) {
      SetJitter(job, run, now);
    } else {
      run.resumed = true;  // its retry budget counts from its start here
      run.start_wall = now.wall;
      SetNotBefore(run, now);
    }
    if (job.policy->overlap.action != OverlapAction::kAllow && job.active > 0) {
      run.held = true;  // whatever the buffer's limit: it is owed
      job.Go().buffered.push_back(run.id);
    } else {
      ++job.active;
      EnqueueReady(run, now);
    }
  }
}

void Plan::SetJitter(Job& job, Run& run, Now now) {
  // A manual fire starts now (its scheduled time may be a millisecond or two
  // later, to keep FireKeys unique); a scheduled one at its time.
  run.start_wall = run.manual ? now.wall : run.scheduled_time;
  if (job.policy->jitter > absl::ZeroDuration() && !run.manual) {
    // The run starts at a uniformly random point of [scheduled, scheduled +
    // jitter].
    std::uniform_int_distribution<int64_t> dist(
        0, absl::ToInt64Milliseconds(job.policy->jitter));
    run.start_wall += absl::Milliseconds(dist(rng_));
  }
  SetNotBefore(run, now);
}

void Plan::SetNotBefore(Run& run, Now now) {
  const MonoTime at =
      MonoTime::FromSinceOrigin(run.start_wall - absl::UnixEpoch() - timeline_);
  run.not_before = std::max(now.mono, at);
}

void Plan::CancelRun(Run& run, std::string detail, Now now, Output* out) {
  if (!run.staged) {
    FinishRun(run, RunState::kCancelled, std::move(detail), now, out);
    return;
  }
  // The driver holds its attempt: take it back first; the run ends when the
  // driver confirms (or runs, if it had already started it).
  Unstage(run, UnstageWhy::kCancel, std::move(detail), out);
}

absl::Status Plan::CancelRunOnRequest(RunId id, std::string detail, Now now,
                                      Output* out) {
  auto it = runs_.find(id);
  if (it == runs_.end()) {
    return absl::NotFoundError(
        absl::StrCat("run ", id, " is not going (finished, or unknown)"));
  }
  Run& run = *it->second;
  if (run.state != RunState::kRunning) {
    if (run.unstage == UnstageWhy::kCancel) return absl::OkStatus();
    // A staged run the driver starts before it gets the unstage is
    // cancelled once started (OnAttemptStarted).
    if (run.staged) run.cancel_requested = true;
    CancelRun(run, std::move(detail), now, out);
    return absl::OkStatus();
  }
  if (run.cancel_requested) return absl::OkStatus();
  run.cancel_requested = true;
  run.SetUnstageDetail(std::move(detail));  // the outcome's detail
  out->actions.push_back(
      CancelAttemptAction{run.id, run.attempt, /*force=*/false});
  // A timed-out attempt has its kill timer already.
  if (!run.timed_out) {
    ArmRunTimer(run, TimerKind::kKill,
                now.mono + job_slots_[run.job_slot]->policy->timeout.grace);
  }
  return absl::OkStatus();
}

void Plan::Unstage(Run& run, UnstageWhy why, std::string detail, Output* out) {
  if (run.unstage == UnstageWhy::kNone) {
    out->actions.push_back(UnstageAction{run.id, run.attempt});
  }
  if (why >= run.unstage) {
    run.unstage = why;
    run.SetUnstageDetail(std::move(detail));
  }
}

void Plan::ReleaseRun(Run& run, Output* out) {
  if (run.staged) {
    Unstage(run, UnstageWhy::kRelease, "", out);  // dropped once given back
    return;
  }
  DropRun(run);
}

void Plan::Transition(Run& run, RunState to, int attempt, std::string detail,
                      Output* out) {
  if (!LegalTransition(run.state, to)) {
    PlanInvariantViolated(absl::StrCat(
        "run ", run.id, " (", FireOf(run).ToString(), "): illegal transition ",
        RunStateName(run.state), " -> ", RunStateName(to)));
  }
  if (options_.record_transitions) {
    out->actions.push_back(TransitionAction{run.id, FireOf(run), run.state, to,
                                            attempt, std::move(detail)});
  }
  run.state = to;
}

void Plan::ArmRunTimer(Run& run, TimerKind kind, MonoTime at) {
  DisarmRunTimer(run);
  run.timer = SetTimer(kind, run.id, at);
  run.timer_armed = true;
}

void Plan::DisarmRunTimer(Run& run) {
  if (run.timer_armed) wheel_.Cancel(run.timer);
  run.timer_armed = false;
}

void Plan::EnqueueReady(Run& run, Now now) {
  // A run may be handed to the driver up to `lookahead` before its time.
  const MonoTime stage_from = run.not_before - options_.lookahead;
  if (stage_from > now.mono) {
    ArmRunTimer(run, TimerKind::kDelay, stage_from);
    return;
  }
  DisarmRunTimer(run);  // re-timed after a clock step: its delay is over
  const Job& job = *job_slots_[run.job_slot];
  ready_.Push(ReadyRun{run.id, job.key.name_space, job.policy->priority,
                       run.scheduled_time});
  run.in_queue = true;
  // A fire whose job says "skip" rather than run late must not wait for a
  // slot past its misfire threshold either. (Manual fires, retries and
  // resumed runs wait as long as it takes.)
  if (ready_.MayHoldBack() && run.attempt == 0 && !run.manual &&
      run.state == RunState::kPending &&
      job.policy->misfire.action == MisfireAction::kSkip &&
      job.policy->misfire.threshold != absl::InfiniteDuration()) {
    ArmRunTimer(run, TimerKind::kStartDeadline, DeadlineOf(run, job));
  }
}

MonoTime Plan::DeadlineOf(const Run& run, const Job& job) const {
  // The first instant at which it is late beyond the threshold, on the
  // monotonic clock.
  const absl::Time late = run.scheduled_time + job.policy->misfire.threshold +
                          absl::Milliseconds(1);
  return MonoTime::FromSinceOrigin(late - absl::UnixEpoch() - timeline_);
}

void Plan::OnStartDeadline(Run& run, Now now, PersistAction* persist,
                           Output* out) {
  if (run.state != RunState::kPending || !run.in_queue) return;
  Job& job = *job_slots_[run.job_slot];
  // (The job's policy may have changed since the deadline was set.)
  const absl::Duration threshold = job.policy->misfire.threshold;
  if (job.policy->misfire.action != MisfireAction::kSkip ||
      threshold == absl::InfiniteDuration())
    return;
  if (now.wall - run.scheduled_time <= threshold) {
    // The wall clock was stepped back meanwhile: not late yet.
    ArmRunTimer(
        run, TimerKind::kStartDeadline,
        std::max(DeadlineOf(run, job), now.mono + absl::Milliseconds(1)));
    return;
  }
  const absl::Time t = run.scheduled_time;
  AddMissed(job, MissedRange{t, t, 1, false, MissReason::kQuota}, persist,
            run.generation);
  FinishRun(run, RunState::kCancelled,
            absl::StrCat("not started within the misfire threshold (",
                         absl::FormatDuration(threshold), "): ",
                         ready_.WhyWaiting(job.key.name_space, now.mono)),
            now, out);
}

Plan::Job* Plan::DropRun(Run& run) {
  Job& job = *job_slots_[run.job_slot];
  if (run.in_queue) ready_.Remove(run.id);
  run.in_queue = false;
  DisarmRunTimer(run);
  if (run.held) {
    std::vector<RunId>& buffered = job.Go().buffered;
    buffered.erase(std::find(buffered.begin(), buffered.end(), run.id));
  } else {
    --job.active;
  }
  Job::RunIds& runs = job.runs;
  runs.erase(std::find(runs.begin(), runs.end(), run.id));
  job.Settle();
  runs_.erase(run.id);  // `run` is gone from here on
  if (!job.removed) return &job;
  FreeSlotIfDone(job.slot);  // `job` may be gone from here on
  return nullptr;
}

void Plan::FinishRun(Run& run, RunState to, std::string detail, Now now,
                     Output* out) {
  Transition(run, to, run.attempt, std::move(detail), out);
  switch (to) {
    case RunState::kSucceeded:
      ++counters_.runs_succeeded;
      break;
    case RunState::kFailed:
      ++counters_.runs_failed;
      break;
    default:
      ++counters_.runs_cancelled;
      break;
  }
  if (Job* job = DropRun(run); job != nullptr) ReleaseBuffered(*job, now, out);
}

void Plan::ReleaseBuffered(Job& job, Now now, Output* out) {
  if (job.active > 0 || job.buffered().empty()) return;
  std::vector<RunId>& buffered = job.Go().buffered;
  Run& run = *runs_.at(buffered.front());
  buffered.erase(buffered.begin());
  run.held = false;
  ++job.active;
  // A pending run, or a lost one taken over, starts now; a run still claiming
  // is queued when its claim is durable (OnPersisted).
  if (run.state == RunState::kPending || run.state == RunState::kLost)
    EnqueueReady(run, now);
}

void Plan::StartReady(Now now, Output* out) {
  if (stop_starting_) return;
  while (std::optional<ReadyRun> ready = ready_.PopStartable(now.mono)) {
    Run& run = *runs_.at(ready->run_id);
    run.in_queue = false;
    DisarmRunTimer(run);  // a start deadline (kStartDeadline)
    ++run.attempt;
    run.timed_out = false;
    if (run.not_before > now.mono) {
      // Staged: the driver starts it at its time and tells us.
      run.staged = true;
      out->actions.push_back(StartAttemptAction{
          run.id, FireOf(run), run.attempt, options_.token, run.not_before,
          /*staged=*/true, run.job_slot});
      continue;
    }
    Transition(run, RunState::kRunning, run.attempt, "", out);
    out->actions.push_back(StartAttemptAction{
        run.id, FireOf(run), run.attempt, options_.token, now.mono,
        /*staged=*/false, run.job_slot, /*durable_first=*/run.resumed});
    BeginAttempt(run, now);
  }
}

void Plan::BeginAttempt(Run& run, Now now) {
  // (A lost run taken over counts its retry budget from its first start
  // here.)
  if (run.attempt == 1 || std::exchange(run.resumed, false))
    run.first_start = now.mono;
  const Job& job = *job_slots_[run.job_slot];
  if (job.policy->timeout.attempt_timeout != absl::InfiniteDuration()) {
    ArmRunTimer(run, TimerKind::kTimeout,
                now.mono + job.policy->timeout.attempt_timeout);
  }
}

void Plan::OnAttemptStarted(const AttemptStartedEvent& e, Now now,
                            Output* out) {
  for (const AttemptStartedEvent::Started& s : e.started) {
    auto it = runs_.find(s.run);
    if (it == runs_.end()) continue;
    Run& run = *it->second;
    if (!run.staged || run.attempt != s.attempt) continue;  // stale
    // An UnstageAction that came too late changes nothing: the attempt runs
    // (a removed job's running attempt runs to completion) -- unless the
    // cancel was requested for this run: then the attempt is cancelled.
    const bool cancel = run.cancel_requested;
    std::string detail = run.TakeUnstageDetail();
    run.staged = false;
    run.unstage = UnstageWhy::kNone;
    Transition(run, RunState::kRunning, run.attempt, "", out);
    BeginAttempt(run, now);
    if (cancel) {
      run.cancel_requested = false;
      (void)CancelRunOnRequest(run.id, std::move(detail), now, out);
    }
  }
}

void Plan::OnUnstaged(Run& run, Now now, Output* out) {
  run.staged = false;
  --run.attempt;  // it never started
  ready_.OnRunFinished(run.id);
  const UnstageWhy why = run.unstage;
  run.unstage = UnstageWhy::kNone;
  if (why == UnstageWhy::kCancel) {
    FinishRun(run, RunState::kCancelled, run.TakeUnstageDetail(), now, out);
    return;
  }
  if (why == UnstageWhy::kRelease) {
    DropRun(run);
    return;
  }
  // Re-timed (the wall clock was stepped): wait for its time anew.
  SetNotBefore(run, now);
  EnqueueReady(run, now);
}

void Plan::OnAttemptFinished(const AttemptFinishedEvent& e, Now now,
                             Output* out) {
  auto it = runs_.find(e.run);
  if (!e.started) {
    if (it != runs_.end() && it->second->staged &&
        it->second->attempt == e.attempt) {
      OnUnstaged(*it->second, now, out);
    }
    return;
  }
  if (it == runs_.end() || it->second->state != RunState::kRunning ||
      it->second->attempt != e.attempt) {
    return;  // a duplicate or stale report
  }
  Run& run = *it->second;
  const Job& job = *job_slots_[run.job_slot];
  ready_.OnRunFinished(run.id);
  DisarmRunTimer(run);
  AttemptOutcome outcome =
      run.timed_out ? AttemptOutcome::kTimedOut : e.outcome;
  if (outcome == AttemptOutcome::kSucceeded) {
    return FinishRun(run, RunState::kSucceeded, e.detail, now, out);
  }
  if (outcome == AttemptOutcome::kCancelled || run.cancel_requested) {
    // A cancel on request says so (CancelRunOnRequest), with what the
    // attempt reported.
    std::string detail = e.detail.empty() ? "cancelled" : e.detail;
    if (run.cancel_requested && run.unstage_detail != nullptr)
      detail = absl::StrCat(*run.unstage_detail, ": ", detail);
    return FinishRun(run, RunState::kCancelled, std::move(detail), now, out);
  }
  const RetryPolicy& retry = job.policy->retry;
  std::string why =
      outcome == AttemptOutcome::kTimedOut ? "timed out" : e.detail;
  if (outcome == AttemptOutcome::kTimedOut) ++counters_.timeouts;
  // A removed job starts nothing new, retries included: its last attempt's
  // failure is final.
  if (job.removed) {
    return FinishRun(run, RunState::kFailed, why + " (job removed: no retry)",
                     now, out);
  }
  const bool retryable = outcome == AttemptOutcome::kTimedOut
                             ? retry.retry_on_timeout
                             : retry.retry_on_failure;
  if (!retryable)
    return FinishRun(run, RunState::kFailed, why + " (not retryable)", now,
                     out);
  if (run.attempt >= retry.max_attempts) {
    return FinishRun(
        run, RunState::kFailed,
        absl::StrCat(why, " (exhausted ", run.attempt,
                     run.attempt == 1 ? " attempt)" : " attempts)"),
        now, out);
  }
  // Exponential backoff with full jitter: uniform in [0, min(max, initial *
  // multiplier^(n-1))].
  const double scale = std::pow(retry.multiplier, run.attempt - 1);
  const absl::Duration cap =
      std::min(retry.max_backoff,
               absl::Seconds(absl::ToDoubleSeconds(retry.initial_backoff) *
                             std::min(scale, 1e12)));
  std::uniform_int_distribution<int64_t> dist(0,
                                              absl::ToInt64Milliseconds(cap));
  const absl::Duration backoff = absl::Milliseconds(dist(rng_));
  // Measured on the monotonic clock: a wall-clock step must not stretch or
  // shrink the budget.
  if (now.mono + backoff - run.first_start > retry.max_retry_duration) {
    return FinishRun(
        run, RunState::kFailed,
        absl::StrCat(why, " (retries would exceed max_retry_duration)"), now,
        out);
  }
  ++counters_.retries;
  Transition(run, RunState::kRetrying, run.attempt,
             absl::StrCat(why, "; retry in ", absl::FormatDuration(backoff)),
             out);
  ArmRunTimer(run, TimerKind::kRetry, now.mono + backoff);
}

}  // namespace chime::core
