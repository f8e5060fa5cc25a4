// The Plan's fires: a job's due fires decided (run, skipped or missed, with
// the misfire and overlap policies), the runs they create, and fires decided
// ahead taken back. The rest of the Plan is in plan.cc, plan_jobs.cc and
// plan_runs.cc.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/core/plan.h"
#include "src/core/plan_records.h"

namespace chime::core {

void Plan::FireJob(Job& job, Now now, PersistAction* persist, Output* out) {
  job.timer_armed = false;
  const DueFires due =
      DecideDueFires(job.source, job.watermark, now.wall, job.policy->misfire,
                     DecideHorizon(job, now.wall));
  for (const MissedRange& range : due.missed) AddMissed(job, range, persist);
  if (due.watermark != job.watermark) {
    job.watermark = due.watermark;
    RecordWatermark(job, persist);
  }
  const OverlapAction overlap = job.policy->overlap.action;
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
  RecordEnded(job, now, persist);
  ArmJob(job, now);
}

void Plan::RecordEnded(Job& job, Now now, PersistAction* persist) {
  if (job.source.Next(job.watermark) != absl::InfiniteFuture()) return;
  const absl::Time ended = job.source.FirstAfterEnd();
  if (ended > now.wall || ended <= job.watermark) return;
  AddMissed(job, MissedRange{ended, ended, 1, false, MissReason::kEnded},
            persist);
  job.watermark = ended;
  RecordWatermark(job, persist);
}

void Plan::RecordWatermark(const Job& job, PersistAction* persist) const {
  if (!options_.record_watermarks) return;
  persist->watermarks.push_back(
      {job.key, job.generation, job.watermark, job.slot});
}

void Plan::AddMissed(Job& job, const MissedRange& range, PersistAction* persist,
                     std::optional<int64_t> generation) {
  counters_.fires_missed[range.reason] += range.count;
  persist->missed.push_back(
      {job.key, generation.value_or(job.generation), range, job.slot});
}

Plan::Run& Plan::NewRun(Job& job, absl::Time scheduled, bool manual, Now now,
                        PersistAction* persist) {
  auto run = std::make_unique<Run>();
  if (run_id_end_ != 0 && next_run_ == run_id_end_) {
    const auto [first, end] = options_.more_run_ids();
    if (end <= first) PlanInvariantViolated("more_run_ids: an empty range");
    next_run_ = first;
    run_id_end_ = end;
  }
  run->id = next_run_++;
  run->generation = job.generation;
  run->scheduled_time = scheduled;
  run->manual = manual;
  run->job_slot = job.slot;
  Run& r = *run;
  runs_.emplace(r.id, std::move(run));
  job.runs.push_back(r.id);
  persist->claims.push_back({FireOf(r), r.id, r.job_slot});
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
  const OverlapPolicy& policy = job.policy->overlap;
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
        if (job.buffered().size() >= limit) {
          if (!manual) skip(MissReason::kBufferFull);
          return;
        }
        Run& run = NewRun(job, scheduled, manual, now, persist);
        run.held = true;
        job.Go().buffered.push_back(run.id);
        return;
      }
      case OverlapAction::kReplace: {
        // The newest fire wins: an older buffered one is dropped, the active
        // runs are cancelled (gracefully if running), and the new run starts
        // when they have ended.
        while (!job.buffered().empty()) {
          FinishRun(*runs_.at(job.buffered().front()), RunState::kCancelled,
                    "replaced by a newer fire", now, out);
        }
        for (RunId id : Job::RunIds(job.runs)) {
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
                          now.mono + job.policy->timeout.grace);
            }
          }
        }
        Run& run = NewRun(job, scheduled, manual, now, persist);
        if (job.active > 0) {
          run.held = true;
          job.Go().buffered.push_back(run.id);
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
  return job.policy->overlap.action == OverlapAction::kAllow
             ? options_.lookahead
             : absl::ZeroDuration();
}

absl::Time Plan::DecideAt(const Job& job, absl::Time previous,
                          absl::Time next) const {
  const absl::Duration lookahead = Lookahead(job);
  if (lookahead <= absl::ZeroDuration()) return next;
  if (!options_.lookahead_sub_second &&
      absl::ToUnixMicros(next) % 1'000'000 != 0) {
    return next;  // a lone instant: decided at its time
  }
  const absl::Time at = next - lookahead;
  if (previous == absl::InfinitePast() || previous >= next) return at;
  return std::max(at, previous + (next - previous) / 2);
}

absl::Time Plan::DecideHorizon(const Job& job, absl::Time now) const {
  if (Lookahead(job) <= absl::ZeroDuration()) return now;
  // The fires up to `now` are due; of those after it only the first may be
  // decided, so a step never decides two ahead.
  const absl::Time next = job.source.Next(std::max(job.watermark, now));
  if (next == absl::InfiniteFuture()) return now;
  const absl::Time previous = std::max(job.watermark, job.source.Prev(next));
  return DecideAt(job, previous, next) <= now ? next : now;
}

void Plan::CancelDecidedAhead(Job& job, absl::string_view why, Now now,
                              Output* out) {
  for (RunId id : Job::RunIds(job.runs)) {
    Run& run = *runs_.at(id);
    if (run.manual || run.held || run.scheduled_time <= now.wall ||
        run.state == RunState::kRunning) {
      continue;
    }
    CancelRun(run, absl::StrCat(why, " before its time"), now, out);
  }
}

// ---------------------------------------------------------------- events and
// timers

}  // namespace chime::core
