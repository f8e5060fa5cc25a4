// The Plan (plan.h): options, timers, time and wall-clock steps, persistence
// batches and their answers, and the step that drives everything. Jobs are in
// plan_jobs.cc, a due fire's fate in plan_fires.cc, runs in plan_runs.cc.
#include "src/core/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/core/plan_records.h"

namespace chime::core {
namespace {

// Timer ids in the wheel: TimerKind in the top 8 bits, an index below.
constexpr int kTimerShift = 56;

}  // namespace

void PlanInvariantViolated(const std::string& what) {
  std::fprintf(stderr, "chime::core::Plan: invariant violated: %s\n",
               what.c_str());
  std::abort();
}

absl::Status Plan::ValidateOptions(const PlanOptions& options) {
  if (options.max_concurrent_runs < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_concurrent_runs: ", options.max_concurrent_runs, " is below 0"));
  }
  if (options.step_tolerance < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("step_tolerance: must not be negative");
  }
  if (options.first_run_id < 1) {
    return absl::InvalidArgumentError("first_run_id: must be at least 1");
  }
  if (options.run_id_end != 0 &&
      (options.run_id_end <= options.first_run_id || !options.more_run_ids)) {
    return absl::InvalidArgumentError(
        "run_id_end: must be above first_run_id, with more_run_ids");
  }
  if (options.lookahead < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("lookahead: must not be negative");
  }
  if (options.max_losses < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_losses: ", options.max_losses, " is below 0"));
  }
  if (options.persist_retry <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("persist_retry: must be positive");
  }
  ReadyQueue scratch;
  for (const auto& [name, config] : options.namespaces) {
    if (absl::Status s = scratch.ConfigureNamespace(name, config); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("namespaces: ", s.message()));
    }
  }
  return absl::OkStatus();
}

Plan::Plan(PlanOptions options, Now now)
    : options_(options),
      rng_(options.seed),
      wheel_(MonoMs(now.mono)),
      ready_(options.max_concurrent_runs),
      wall_minus_mono_(now.wall - absl::UnixEpoch() - now.mono.SinceOrigin()),
      timeline_(wall_minus_mono_),
      next_run_(options.first_run_id),
      run_id_end_(options.run_id_end) {
  if (absl::Status s = ValidateOptions(options_); !s.ok())
    PlanInvariantViolated(std::string(s.message()));
  for (const auto& [name, config] : options_.namespaces) {
    if (!ready_.ConfigureNamespace(name, config).ok())
      PlanInvariantViolated("namespace config");
  }
}

absl::Status Plan::ConfigureNamespace(absl::string_view name_space,
                                      const NamespaceConfig& config, Now now,
                                      Output* out) {
  if (absl::Status s = ready_.ConfigureNamespace(name_space, config); !s.ok())
    return s;
  Step(now, out);  // a raised quota may let pending runs start, or a new rate
                   // window open later
  return absl::OkStatus();
}

Plan::~Plan() = default;

int64_t Plan::MonoMs(MonoTime t) const {
  // Rounded up: a timer never fires before the instant it stands for.
  return absl::ToInt64Milliseconds(
      absl::Ceil(t.SinceOrigin(), absl::Milliseconds(1)));
}

wheel::TimingWheel::Handle Plan::SetTimer(TimerKind kind, uint64_t index,
                                          MonoTime at) {
  const uint64_t id = (static_cast<uint64_t>(kind) << kTimerShift) | index;
  return wheel_.Insert(id, std::max(MonoMs(at), wheel_.now()));
}

// ---------------------------------------------------------------- jobs

void Plan::DetectClockStep(Now now, Output* out) {
  const absl::Duration offset =
      now.wall - absl::UnixEpoch() - now.mono.SinceOrigin();
  const absl::Duration change = offset - wall_minus_mono_;
  wall_minus_mono_ = offset;
  // Start times follow slow drift (NTP slewing) within a millisecond; between
  // re-anchorings every fire at the same wall time gets the same monotonic
  // start, so the driver can start them together.
  if (absl::AbsDuration(offset - timeline_) > absl::Milliseconds(1))
    timeline_ = offset;
  if (absl::AbsDuration(change) <= options_.step_tolerance) return;
  // The wall clock was stepped: every job's timer stands for a wall time, so
  // recompute them all. Watermarks do not move, so a backward step re-runs
  // nothing; after a forward step the fires skipped over are due at once and go
  // through the misfire policy.
  ++counters_.clock_steps;
  for (auto& job : job_slots_) {
    if (job != nullptr && !job->removed) ArmJob(*job, now);
  }
  // Runs waiting for their start time (jitter, lookahead) wait for the same
  // wall time on the new timeline; staged ones are taken back first. In run
  // order, so that the actions are deterministic. (A run in the ready queue
  // keeps its start deadline: OnStartDeadline judges lateness by wall time.)
  std::vector<RunId> waiting;
  for (const auto& [id, run] : runs_) {
    if (run->staged || (run->state == RunState::kPending && run->timer_armed &&
                        !run->in_queue))
      waiting.push_back(id);
  }
  std::sort(waiting.begin(), waiting.end());
  for (RunId id : waiting) {
    Run& run = *runs_.at(id);
    if (run.staged) {
      Unstage(run, UnstageWhy::kRetime, "", out);
    } else {
      SetNotBefore(run, now);
      EnqueueReady(run, now);
    }
  }
}

void Plan::ArmJob(Job& job, Now now) {
  if (job.timer_armed) wheel_.Cancel(job.timer);
  job.timer_armed = false;
  if (job.paused || job.removed) return;
  MonoTime at;
  if (const absl::Time next = job.source.Next(job.watermark);
      next != absl::InfiniteFuture()) {
    // (The watermark stands for the previous fire: no fire lies between it
    // and next.)
    at = now.mono + (DecideAt(job, job.watermark, next) - now.wall);
  } else {
    // No fire left: if the end date cut the schedule, wake when the first
    // fire past it would have been due, to record that the job ended
    // (FireJob). The watermark then passes it: recorded once.
    const absl::Time ended = job.source.FirstAfterEnd();
    if (ended == absl::InfiniteFuture() || ended <= job.watermark) return;
    at = now.mono + (ended - now.wall);
  }
  job.timer = SetTimer(TimerKind::kJob, job.slot, at);
  job.timer_armed = true;
}

// ---------------------------------------------------------------- fires

void Plan::EndBatch(Now now, Output* out) {
  batching_ = false;
  FlushPersist(std::exchange(batched_, PersistAction{}), now, out);
}

void Plan::FlushPersist(PersistAction persist, Now now, Output* out) {
  if (persist.claims.empty() && persist.missed.empty() &&
      persist.watermarks.empty())
    return;
  if (batching_) {
    const auto append = [](auto& to, auto& from) {
      to.insert(to.end(), std::make_move_iterator(from.begin()),
                std::make_move_iterator(from.end()));
    };
    append(batched_.claims, persist.claims);
    append(batched_.missed, persist.missed);
    append(batched_.watermarks, persist.watermarks);
    return;
  }
  persist.batch = next_batch_++;
  persist.token = options_.token;
  in_flight_.insert(persist.batch);
  out->actions.push_back(std::move(persist));
}

void Plan::OnPersisted(const PersistedEvent& e, Now now, Output* out) {
  if (in_flight_.erase(e.batch.batch) == 0) return;  // a duplicate answer
  // A burst (a bulk load: one batch per job added) leaves a large table
  // behind; an idle scheduler keeps only a small one.
  if (in_flight_.empty() && in_flight_.capacity() > 1024) in_flight_ = {};
  if (e.status.ok()) {
    for (const PersistAction::Claim& claim : e.batch.claims) {
      auto it = runs_.find(claim.run);
      if (it == runs_.end() || it->second->state != RunState::kClaiming)
        continue;
      Run& run = *it->second;
      run.persisted = true;
      Transition(run, RunState::kPending, 0, "claimed", out);
      if (!run.held) EnqueueReady(run, now);
    }
    return;
  }
  // Refused or failed (rare): what follows works on a copy of the batch.
  PersistAction batch = e.batch;
  if (e.status.code() == absl::StatusCode::kFailedPrecondition) {
    // Fenced: another scheduler owns these jobs now. Nothing was written; these
    // runs never happen here, and the owner decides the fires' fate.
    for (const PersistAction::Claim& claim : batch.claims) {
      auto it = runs_.find(claim.run);
      if (it != runs_.end() && it->second->state == RunState::kClaiming) {
        FinishRun(*it->second, RunState::kCancelled,
                  absl::StrCat("fenced: ", e.status.message()), now, out);
      }
    }
    return;
  }
  if (e.status.code() == absl::StatusCode::kAlreadyExists) {
    // Some fire of the batch was claimed before, by another run (the store
    // refuses a second claim of a FireKey, whoever asks). Nothing was written.
    // Send each claim alone so that only the refused one is affected; a single
    // refused claim never runs here.
    if (batch.claims.size() <= 1) {
      for (const PersistAction::Claim& claim : batch.claims) {
        auto it = runs_.find(claim.run);
        if (it != runs_.end() && it->second->state == RunState::kClaiming) {
          FinishRun(*it->second, RunState::kCancelled,
                    absl::StrCat("already claimed: ", e.status.message()), now,
                    out);
        }
      }
      batch.claims.clear();
      FlushPersist(std::move(batch), now,
                   out);  // the missed records and watermarks
      return;
    }
    PersistAction rest = std::move(batch);
    for (PersistAction::Claim& claim : rest.claims) {
      PersistAction single;
      single.claims.push_back(std::move(claim));
      FlushPersist(std::move(single), now, out);
    }
    rest.claims.clear();
    FlushPersist(std::move(rest), now, out);
    return;
  }
  // Not written: send the same batch again later (claims are create-if-absent,
  // so a batch that was in fact written is harmless to repeat).
  to_resend_.push_back(std::move(batch));
  if (!persist_timer_armed_) {
    SetTimer(TimerKind::kPersist, 0, now.mono + options_.persist_retry);
    persist_timer_armed_ = true;
  }
}

void Plan::OnTimer(const wheel::TimingWheel::Expired& e, Now now,
                   PersistAction* persist, Output* out) {
  const auto kind = static_cast<TimerKind>(e.id >> kTimerShift);
  const uint64_t index = e.id & ((uint64_t{1} << kTimerShift) - 1);
  // A job's or run's timer acts only if it still stands: not cancelled nor
  // re-armed since the wheel gave it out (it may have waited in due_). The
  // persist timer is never cancelled.
  if (kind == TimerKind::kJob) {
    if (index < job_slots_.size() && job_slots_[index] != nullptr &&
        !job_slots_[index]->removed && job_slots_[index]->timer_armed &&
        job_slots_[index]->timer == e.handle) {
      FireJob(*job_slots_[index], now, persist, out);
    }
    return;
  }
  if (kind == TimerKind::kPersist) {
    persist_timer_armed_ = false;
    std::vector<PersistAction> resend;
    resend.swap(to_resend_);
    for (PersistAction& batch : resend) {
      in_flight_.insert(batch.batch);
      out->actions.push_back(std::move(batch));
    }
    return;
  }
  auto it = runs_.find(index);
  if (it == runs_.end() || !it->second->timer_armed ||
      it->second->timer != e.handle)
    return;
  Run& run = *it->second;
  run.timer_armed = false;
  switch (kind) {
    case TimerKind::kDelay:
      if (run.state == RunState::kPending && !run.held) EnqueueReady(run, now);
      break;
    case TimerKind::kRetry:
      if (run.state == RunState::kRetrying) {
        Transition(run, RunState::kPending, run.attempt, "retrying", out);
        run.not_before = now.mono;
        EnqueueReady(run, now);
      }
      break;
    case TimerKind::kTimeout:
      if (run.state == RunState::kRunning) {
        run.timed_out = true;
        out->actions.push_back(
            CancelAttemptAction{run.id, run.attempt, /*force=*/false});
        ArmRunTimer(run, TimerKind::kKill,
                    now.mono + job_slots_[run.job_slot]->policy->timeout.grace);
      }
      break;
    case TimerKind::kKill:
      if (run.state == RunState::kRunning) {
        out->actions.push_back(
            CancelAttemptAction{run.id, run.attempt, /*force=*/true});
      }
      break;
    case TimerKind::kStartDeadline:
      OnStartDeadline(run, now, persist, out);
      break;
    default:
      break;
  }
}

void Plan::Step(Now now, Output* out) {
  // A step at the same instant as the last (each add of a batch steps twice)
  // finds the clocks where they were: no step to detect, the same
  // millisecond. (Duration arithmetic is out of line in the system's
  // abseil: ~8% of an add.)
  if (!(now.wall == stepped_.wall && now.mono == stepped_.mono)) {
    DetectClockStep(now, out);
    stepped_ = now;
    stepped_ms_ = absl::ToInt64Milliseconds(
        absl::Floor(now.mono.SinceOrigin(), absl::Milliseconds(1)));
  }
  PersistAction persist;
  const int64_t now_ms = stepped_ms_;
  // `>=`, not `>`: a timer armed for an instant that has already come (a retry
  // with no backoff, a job re-armed after a forward clock step) sits in the
  // wheel's overdue list and fires only at an AdvanceTo, even one to the
  // wheel's own time.
  if (now_ms >= wheel_.now()) wheel_.AdvanceTo(now_ms, &due_);
  size_t end = due_.size();
  if (options_.max_timers_per_step > 0)
    end = std::min(end, due_next_ + options_.max_timers_per_step);
  for (; due_next_ < end; ++due_next_)
    OnTimer(due_[due_next_], now, &persist, out);
  if (due_next_ == due_.size()) {
    due_next_ = 0;
    due_.clear();
    if (due_.capacity() > 4096)
      std::vector<wheel::TimingWheel::Expired>().swap(due_);
  }
  FlushPersist(std::move(persist), now, out);
  StartReady(now, out);
  out->wake_at = MonoTime::Infinite();
  if (due_next_ < due_.size()) {
    out->wake_at = now.mono;  // more timers are due: the next step takes them
  } else if (std::optional<int64_t> next = wheel_.NextDeadline()) {
    out->wake_at = MonoTime::FromSinceOrigin(absl::Milliseconds(*next));
  }
  if (std::optional<MonoTime> eligible = ready_.NextEligibleTime(now.mono)) {
    out->wake_at = std::min(out->wake_at, *eligible);
  }
}

void Plan::DecideWaitingFire(Job& job, Now now, Output* out) {
  // Armed, and no longer in the wheel: it came due and waits in due_.
  if (!job.timer_armed || wheel_.IsPending(job.timer)) return;
  PersistAction persist;
  FireJob(job, now, &persist, out);  // re-arms it: due_'s entry goes stale
  FlushPersist(std::move(persist), now, out);
}

void Plan::Advance(Now now, Output* out) { Step(now, out); }

void Plan::OnEvent(const Event& event, Now now, Output* out) {
  OnEvents(absl::MakeConstSpan(&event, 1), now, out);
}

void Plan::OnEvents(absl::Span<const Event> events, Now now, Output* out) {
  for (const Event& event : events) {
    if (const auto* p = std::get_if<PersistedEvent>(&event)) {
      OnPersisted(*p, now, out);
    } else if (const auto* a = std::get_if<AttemptFinishedEvent>(&event)) {
      OnAttemptFinished(*a, now, out);
    } else if (const auto* s = std::get_if<AttemptStartedEvent>(&event)) {
      OnAttemptStarted(*s, now, out);
    }
  }
  Step(now, out);
}

// ---------------------------------------------------------------- inspection

}  // namespace chime::core
