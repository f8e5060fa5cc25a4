#include "src/core/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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
  if (options.lookahead < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("lookahead: must not be negative");
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
      next_run_(options.first_run_id) {
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

void Plan::FreeSlotIfDone(uint32_t slot) {
  const std::unique_ptr<Job>& job = job_slots_[slot];
  if (job == nullptr || !job->removed || !job->runs.empty()) return;
  job_slots_[slot].reset();
  free_job_slots_.push_back(slot);
}

absl::StatusOr<Plan::Job*> Plan::FindJob(const JobKey& key) {
  auto it = jobs_.find(key);
  if (it == jobs_.end()) {
    return absl::NotFoundError(absl::StrCat("no job ", key.ToString()));
  }
  return job_slots_[it->second].get();
}

absl::Status Plan::UpsertJob(const JobSpec& spec, Now now, Output* out) {
  absl::StatusOr<FireSource> source = FireSource::Validate(spec);
  if (!source.ok()) return source.status();
  return UpsertJob(spec, *std::move(source), now, out);
}

absl::Status Plan::UpsertJob(const JobSpec& spec, FireSource source, Now now,
                             Output* out, absl::Time requested,
                             const Resume* resume) {
  const absl::Time since = std::min(requested, now.wall);
  Step(now, out);
  PersistAction persist;
  auto it = jobs_.find(spec.key);
  if (it == jobs_.end()) {
    uint32_t slot;
    if (!free_job_slots_.empty()) {
      slot = free_job_slots_.back();
      free_job_slots_.pop_back();
    } else {
      slot = static_cast<uint32_t>(job_slots_.size());
      job_slots_.emplace_back();
    }
    auto job = std::make_unique<Job>();
    job->spec = spec;
    job->source = std::move(source);
    job->slot = slot;
    // A job added again after removal continues its generations, so its fires
    // never reuse the FireKeys of the old one's. (The store will own
    // generations once it is durable.)
    if (auto retired = retired_generations_.extract(spec.key);
        !retired.empty()) {
      job->generation = retired.mapped() + 1;
    }
    // A new job's first fire is after now -- except a one-shot time that has
    // already passed: it is due at once, and the misfire policy decides whether
    // it still runs (by default it does, within the catch-up window) or is
    // recorded missed. Never silently dropped.
    job->watermark = since;
    if (spec.trigger.kind == Trigger::Kind::kAt && spec.trigger.at <= since) {
      job->watermark = spec.trigger.at - absl::Nanoseconds(1);
    }
    if (resume != nullptr) job->generation = resume->generation;
    if (resume != nullptr && resume->watermark != absl::InfinitePast()) {
      // The store's watermark says which fires are decided already; the ones
      // after it that came due while no scheduler ran are due now.
      job->watermark = resume->watermark;
    } else {
      // Stored at once, so that a restart before the first fire resumes from
      // here: every fire after the add is decided, none silently dropped.
      persist.watermarks.push_back({spec.key, job->generation, job->watermark});
    }
    jobs_.emplace(spec.key, slot);
    job_slots_[slot] = std::move(job);
    ArmJob(*job_slots_[slot], now);
  } else {
    Job& job = *job_slots_[it->second];
    const bool schedule_changed = job.spec.trigger != spec.trigger ||
                                  job.spec.start != spec.start ||
                                  job.spec.end != spec.end;
    const bool was_paused = job.spec.paused;
    job.spec = spec;
    // Pausing goes through PauseJob/ResumeJob below, which record the misses.
    job.spec.paused = was_paused;
    if (schedule_changed) {
      // Fires of the old schedule that came due while paused are recorded now,
      // under the old generation: resuming looks only at the new schedule.
      if (was_paused) RecordPausedMisses(job, now, &persist);
      CancelDecidedAhead(job, "schedule changed", now, out);
      ++job.generation;
      job.source = std::move(source);
      // The new schedule's first fire is its first after the request -- even
      // when the old one's watermark is later (a fire decided ahead, a
      // backward clock step): FireKeys carry the generation, so nothing can
      // collide, and nothing of the new schedule is covered without a record.
      job.watermark = since;
      persist.watermarks.push_back({job.spec.key, job.generation, since});
      // Buffered fires of the old schedule are dropped. FinishRun takes each
      // out of the buffer.
      while (!job.buffered.empty()) {
        FinishRun(*runs_.at(job.buffered.front()), RunState::kCancelled,
                  "schedule changed", now, out);
      }
    }
    ArmJob(job, now);
    if (spec.paused != was_paused) {
      absl::Status s = spec.paused ? PauseJob(spec.key, now, out)
                                   : ResumeJob(spec.key, now, out);
      if (!s.ok()) return s;
    }
  }
  FlushPersist(std::move(persist), now, out);
  Step(now, out);
  return absl::OkStatus();
}

absl::Status Plan::RemoveJob(const JobKey& key, Now now, Output* out) {
  return RemoveJob(key, now, out, Unstarted::kCancel);
}

absl::Status Plan::RemoveJob(const JobKey& key, Now now, Output* out,
                             Unstarted unstarted) {
  ASSIGN_OR_RETURN(Job * found, FindJob(key));
  Step(now, out);
  Job& job = *found;
  // Fires that came due while the job was paused get their record now: no
  // resume will come.
  if (job.spec.paused) {
    PersistAction persist;
    RecordPausedMisses(job, now, &persist);
    FlushPersist(std::move(persist), now, out);
  }
  if (job.timer_armed) wheel_.Cancel(job.timer);
  job.timer_armed = false;
  job.removed = true;
  // Runs not yet started are cancelled; running ones finish (their results are
  // still recorded).
  retired_generations_[key] = job.generation;
  jobs_.erase(key);
  const uint32_t slot = job.slot;
  for (RunId id : std::vector<RunId>(job.runs)) {
    Run& run = *runs_.at(id);
    if (run.state == RunState::kRunning) continue;
    if (unstarted == Unstarted::kRelease) {
      ReleaseRun(run, out);
    } else {
      CancelRun(run, "job removed", now, out);
    }
  }
  // With runs still going, the slot is freed when the last one ends.
  FreeSlotIfDone(slot);
  Step(now, out);
  return absl::OkStatus();
}

absl::Status Plan::PauseJob(const JobKey& key, Now now, Output* out) {
  ASSIGN_OR_RETURN(Job * found, FindJob(key));
  Step(now, out);
  Job& job = *found;
  if (job.spec.paused) return absl::OkStatus();
  job.spec.paused = true;
  CancelDecidedAhead(job, "job paused", now, out);
  ArmJob(job, now);
  Step(now, out);
  return absl::OkStatus();
}

absl::Status Plan::ResumeJob(const JobKey& key, Now now, Output* out) {
  ASSIGN_OR_RETURN(Job * found, FindJob(key));
  Step(now, out);
  Job& job = *found;
  if (!job.spec.paused) return absl::OkStatus();
  job.spec.paused = false;
  PersistAction persist;
  RecordPausedMisses(job, now, &persist);
  job.watermark = std::max(job.watermark, now.wall);
  ArmJob(job, now);
  FlushPersist(std::move(persist), now, out);
  Step(now, out);
  return absl::OkStatus();
}

void Plan::RecordPausedMisses(Job& job, Now now, PersistAction* persist) {
  // Fires due while paused are recorded missed, as one range.
  const absl::Time first = job.source.Next(job.watermark);
  const absl::Time last = job.source.Prev(now.wall + absl::Nanoseconds(1));
  if (first <= last && last != absl::InfinitePast()) {
    AddMissed(job, CountRange(job.source, first, last, MissReason::kPaused),
              persist);
    job.watermark = last;
    persist->watermarks.push_back(
        {job.spec.key, job.generation, job.watermark});
  }
}

absl::StatusOr<RunId> Plan::TriggerJob(const JobKey& key, Now now,
                                       Output* out) {
  ASSIGN_OR_RETURN(Job * found, FindJob(key));
  Step(now, out);
  Job& job = *found;
  PersistAction persist;
  const size_t before = persist.claims.size();
  absl::Time at = absl::UnixEpoch() + absl::Floor(now.wall - absl::UnixEpoch(),
                                                  absl::Milliseconds(1));
  // Two manual fires must never share a FireKey (the second claim would collide
  // with the first): a trigger within the same millisecond as the previous one,
  // or after a backward clock step, takes the next free millisecond.
  if (at <= job.last_manual) at = job.last_manual + absl::Milliseconds(1);
  DecideFire(job, at, now, &persist, out, /*manual=*/true);
  RunId run = persist.claims.size() > before ? persist.claims.back().run : 0;
  if (run != 0) job.last_manual = at;
  FlushPersist(std::move(persist), now, out);
  Step(now, out);
  if (run == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", key.ToString(),
        " is still running and its overlap policy refused another run"));
  }
  return run;
}

// ---------------------------------------------------------------- time

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
  // order, so that the actions are deterministic.
  std::vector<RunId> waiting;
  for (const auto& [id, run] : runs_) {
    if (run->staged || (run->state == RunState::kPending && run->timer_armed))
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
  job.next_fire = job.source.Next(job.watermark);
  if (job.spec.paused || job.removed || job.next_fire == absl::InfiniteFuture())
    return;
  const MonoTime at = now.mono + (job.next_fire - now.wall) - Lookahead(job);
  job.timer = SetTimer(TimerKind::kJob, job.slot, at);
  job.timer_armed = true;
}

// ---------------------------------------------------------------- fires

void Plan::FireJob(Job& job, Now now, PersistAction* persist, Output* out) {
  job.timer_armed = false;
  const DueFires due =
      DecideDueFires(job.source, job.watermark, now.wall, job.spec.misfire,
                     now.wall + Lookahead(job));
  for (const MissedRange& range : due.missed) AddMissed(job, range, persist);
  if (due.watermark != job.watermark) {
    job.watermark = due.watermark;
    persist->watermarks.push_back(
        {job.spec.key, job.generation, job.watermark});
  }
  const OverlapAction overlap = job.spec.overlap.action;
  if (due.run.size() > 1 &&
      (overlap == OverlapAction::kSkip || overlap == OverlapAction::kReplace)) {
    // Several fires came due at once (after downtime or a forward clock step)
    // and the policy lets at most one of them run: the newest. Deciding them
    // oldest first would run a stale fire and skip the fresh one (skip), or
    // claim runs only to cancel them (replace). The others are consecutive
    // fires of the schedule: one range.
    DecideFire(job, due.run.back(), now, persist, out);
    AddMissed(
        job,
        MissedRange{due.run.front(), due.run[due.run.size() - 2],
                    static_cast<int64_t>(due.run.size() - 1), false,
                    overlap == OverlapAction::kSkip ? MissReason::kOverlap
                                                    : MissReason::kReplaced},
        persist);
  } else {
    for (absl::Time scheduled : due.run)
      DecideFire(job, scheduled, now, persist, out);
  }
  ArmJob(job, now);
}

void Plan::AddMissed(Job& job, const MissedRange& range,
                     PersistAction* persist) {
  counters_.fires_missed[range.reason] += range.count;
  persist->missed.push_back({job.spec.key, job.generation, range});
}

Plan::Run& Plan::NewRun(Job& job, absl::Time scheduled, bool manual, Now now,
                        PersistAction* persist) {
  auto run = std::make_unique<Run>();
  run->id = next_run_++;
  run->fire = FireKey{job.spec.key, job.generation, scheduled, manual};
  run->job_slot = job.slot;
  Run& r = *run;
  runs_.emplace(r.id, std::move(run));
  job.runs.push_back(r.id);
  persist->claims.push_back({r.fire, r.id});
  ++counters_.fires_run;
  SetJitter(job, r, now);
  return r;
}

// The overlap policy: what a fire that comes due does while the job's previous
// run is going.
void Plan::DecideFire(Job& job, absl::Time scheduled, Now now,
                      PersistAction* persist, Output* out, bool manual) {
  auto skip = [&](MissReason reason) {
    AddMissed(job, MissedRange{scheduled, scheduled, 1, false, reason},
              persist);
  };
  const OverlapPolicy& policy = job.spec.overlap;
  const bool busy = job.active > 0;
  if (busy) {
    switch (policy.action) {
      case OverlapAction::kAllow:
        break;
      case OverlapAction::kSkip:
        if (!manual) return skip(MissReason::kOverlap);
        return;  // a manual trigger refused by the policy creates nothing
      case OverlapAction::kBufferOne:
      case OverlapAction::kBufferAll: {
        const size_t limit = policy.action == OverlapAction::kBufferOne
                                 ? 1
                                 : static_cast<size_t>(policy.max_buffered);
        if (job.buffered.size() >= limit) {
          if (!manual) skip(MissReason::kBufferFull);
          return;
        }
        Run& run = NewRun(job, scheduled, manual, now, persist);
        run.held = true;
        job.buffered.push_back(run.id);
        return;
      }
      case OverlapAction::kReplace: {
        // The newest fire wins: an older buffered one is dropped, the active
        // runs are cancelled (gracefully if running), and the new run starts
        // when they have ended.
        while (!job.buffered.empty()) {
          FinishRun(*runs_.at(job.buffered.front()), RunState::kCancelled,
                    "replaced by a newer fire", now, out);
        }
        for (RunId id : std::vector<RunId>(job.runs)) {
          Run& old = *runs_.at(id);
          if (old.held) continue;
          if (old.state != RunState::kRunning) {
            if (old.unstage != UnstageWhy::kCancel)
              CancelRun(old, "replaced by a newer fire", now, out);
          } else if (!old.cancel_requested) {
            old.cancel_requested = true;
            out->actions.push_back(
                CancelAttemptAction{old.id, old.attempt, /*force=*/false});
            // A target that ignores the graceful cancel is killed after the
            // grace period, as on a timeout; otherwise it would hold its
            // replacement back forever. (A timed-out attempt already has its
            // kill timer.)
            if (!old.timed_out) {
              ArmRunTimer(old, TimerKind::kKill,
                          now.mono + job.spec.timeout.grace);
            }
          }
        }
        Run& run = NewRun(job, scheduled, manual, now, persist);
        if (job.active > 0) {
          run.held = true;
          job.buffered.push_back(run.id);
        } else {
          ++job.active;
        }
        return;
      }
    }
  }
  NewRun(job, scheduled, manual, now, persist);
  ++job.active;
}

absl::Duration Plan::Lookahead(const Job& job) const {
  return job.spec.overlap.action == OverlapAction::kAllow
             ? options_.lookahead
             : absl::ZeroDuration();
}

void Plan::CancelDecidedAhead(Job& job, absl::string_view why, Now now,
                              Output* out) {
  for (RunId id : std::vector<RunId>(job.runs)) {
    Run& run = *runs_.at(id);
    if (run.fire.manual || run.held || run.fire.scheduled_time <= now.wall ||
        run.state == RunState::kRunning) {
      continue;
    }
    CancelRun(run, absl::StrCat(why, " before its time"), now, out);
  }
}

// ---------------------------------------------------------------- events and
// timers

void Plan::FlushPersist(PersistAction persist, Now now, Output* out) {
  if (persist.claims.empty() && persist.missed.empty() &&
      persist.watermarks.empty())
    return;
  persist.batch = next_batch_++;
  persist.token = options_.token;
  in_flight_.emplace(persist.batch, persist);
  out->actions.push_back(std::move(persist));
}

void Plan::OnPersisted(const PersistedEvent& e, Now now, Output* out) {
  auto node = in_flight_.extract(e.batch);
  if (node.empty()) return;  // a duplicate answer
  PersistAction& batch = node.mapped();
  if (e.status.ok()) {
    for (const PersistAction::Claim& claim : batch.claims) {
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

void Plan::OnTimer(uint64_t id, Now now, PersistAction* persist, Output* out) {
  const auto kind = static_cast<TimerKind>(id >> kTimerShift);
  const uint64_t index = id & ((uint64_t{1} << kTimerShift) - 1);
  if (kind == TimerKind::kJob) {
    if (index < job_slots_.size() && job_slots_[index] != nullptr &&
        !job_slots_[index]->removed) {
      FireJob(*job_slots_[index], now, persist, out);
    }
    return;
  }
  if (kind == TimerKind::kPersist) {
    persist_timer_armed_ = false;
    std::vector<PersistAction> resend;
    resend.swap(to_resend_);
    for (PersistAction& batch : resend) {
      in_flight_.emplace(batch.batch, batch);
      out->actions.push_back(std::move(batch));
    }
    return;
  }
  auto it = runs_.find(index);
  if (it == runs_.end()) return;
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
                    now.mono + job_slots_[run.job_slot]->spec.timeout.grace);
      }
      break;
    case TimerKind::kKill:
      if (run.state == RunState::kRunning) {
        out->actions.push_back(
            CancelAttemptAction{run.id, run.attempt, /*force=*/true});
      }
      break;
    default:
      break;
  }
}

void Plan::Step(Now now, Output* out) {
  DetectClockStep(now, out);
  PersistAction persist;
  std::vector<wheel::TimingWheel::Expired> expired;
  const int64_t now_ms = absl::ToInt64Milliseconds(
      absl::Floor(now.mono.SinceOrigin(), absl::Milliseconds(1)));
  // `>=`, not `>`: a timer armed for an instant that has already come (a retry
  // with no backoff, a job re-armed after a forward clock step) sits in the
  // wheel's overdue list and fires only at an AdvanceTo, even one to the
  // wheel's own time.
  if (now_ms >= wheel_.now()) wheel_.AdvanceTo(now_ms, &expired);
  for (const auto& e : expired) OnTimer(e.id, now, &persist, out);
  FlushPersist(std::move(persist), now, out);
  StartReady(now, out);
  out->wake_at = MonoTime::Infinite();
  if (std::optional<int64_t> next = wheel_.NextDeadline()) {
    out->wake_at = MonoTime::FromSinceOrigin(absl::Milliseconds(*next));
  }
  if (std::optional<MonoTime> eligible = ready_.NextEligibleTime(now.mono)) {
    out->wake_at = std::min(out->wake_at, *eligible);
  }
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

absl::Time Plan::NextFireTime(const JobKey& key) const {
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return absl::InfiniteFuture();
  const Job& job = *job_slots_[it->second];
  return job.spec.paused ? absl::InfiniteFuture() : job.next_fire;
}

const JobSpec* Plan::Spec(const JobKey& key) const {
  auto it = jobs_.find(key);
  return it == jobs_.end() ? nullptr : &job_slots_[it->second]->spec;
}

int64_t Plan::Generation(const JobKey& key) const {
  auto it = jobs_.find(key);
  return it == jobs_.end() ? 0 : job_slots_[it->second]->generation;
}

absl::Time Plan::Watermark(const JobKey& key) const {
  auto it = jobs_.find(key);
  return it == jobs_.end() ? absl::InfinitePast()
                           : job_slots_[it->second]->watermark;
}

std::optional<RunState> Plan::GetRunState(RunId run) const {
  auto it = runs_.find(run);
  if (it == runs_.end()) return std::nullopt;
  return it->second->state;
}

}  // namespace chime::core
