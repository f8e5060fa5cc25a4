// The Plan's jobs: adding, replacing, removing, pausing, resuming and
// triggering them, and what the Plan tells about them. The rest of the Plan
// is in plan.cc (time, timers, persistence, the step), plan_fires.cc (a due
// fire's fate) and plan_runs.cc (a run from pending to its outcome).
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/core/plan.h"
#include "src/core/plan_records.h"

namespace chime::core {

Plan::Policy Plan::Policy::Of(const JobSpec& spec) {
  return Policy{.jitter = spec.jitter,
                .misfire = spec.misfire,
                .overlap = spec.overlap,
                .retry = spec.retry,
                .timeout = spec.timeout,
                .priority = spec.priority};
}

const Plan::Policy* Plan::AcquirePolicy(const JobSpec& spec) {
  Policy policy = Policy::Of(spec);
  // Jobs added together mostly share a policy: compared, not hashed.
  if (last_policy_ == nullptr || last_policy_->first != policy)
    last_policy_ = &*policies_.try_emplace(std::move(policy), 0).first;
  ++last_policy_->second;
  return &last_policy_->first;
}

void Plan::ReleasePolicy(const Policy* policy) {
  if (policy == nullptr) return;
  auto it = policies_.find(*policy);
  if (it == policies_.end())
    PlanInvariantViolated("released an unknown policy");
  if (--it->second > 0) return;
  if (last_policy_ == &*it) last_policy_ = nullptr;
  policies_.erase(it);
}

void Plan::FreeSlotIfDone(uint32_t slot) {
  const std::unique_ptr<Job>& job = job_slots_[slot];
  if (job == nullptr || !job->removed || !job->runs.empty()) return;
  ReleasePolicy(job->policy);
  job_slots_[slot].reset();
  free_job_slots_.push_back(slot);
}

absl::StatusOr<Plan::Job*> Plan::FindJob(const JobKey& key) {
  auto it = jobs_.find(key);
  if (it == jobs_.end()) {
    return absl::NotFoundError(absl::StrCat("no job ", key.ToString()));
  }
  return job_slots_[it->slot()].get();
}

absl::Status Plan::UpsertJob(const JobSpec& spec, Now now, Output* out) {
  absl::StatusOr<FireSource> source = FireSource::Validate(spec);
  if (!source.ok()) return source.status();
  return UpsertJob(spec, *std::move(source), now, out);
}

absl::Status Plan::UpsertJob(const JobSpec& spec, FireSource source, Now now,
                             Output* out, absl::Time requested,
                             const Resume* resume, PackedSpec packed,
                             int64_t generation) {
  const absl::Time since = std::min(requested, now.wall);
  auto it = jobs_.find(spec.key);
  if (it == jobs_.end() && resume != nullptr)
    RETURN_IF_ERROR(CheckTakeOver(*resume));
  if (packed.empty()) packed = PackedSpec::Pack(spec);
  Step(now, out);
  if (it != jobs_.end()) DecideWaitingFire(*job_slots_[it->slot()], now, out);
  PersistAction persist;
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
    job->key = spec.key;
    job->packed = std::move(packed);
    job->policy = AcquirePolicy(spec);
    job->paused = spec.paused;
    job->source = std::move(source);
    job->slot = slot;
    // A job added again after removal continues its generations, so its fires
    // never reuse the FireKeys of the old one's. (The store will own
    // generations once it is durable.)
    // (Not looked up while there are none: hashing the key is most of it.)
    if (!retired_generations_.empty()) {
      if (auto retired = retired_generations_.extract(spec.key);
          !retired.empty()) {
        job->generation = retired.mapped() + 1;
      }
    }
    // A new job's first fire is after now -- except a one-shot time that has
    // already passed: it is due at once, and the misfire policy decides whether
    // it still runs (by default it does, within the catch-up window) or is
    // recorded missed. Never silently dropped.
    job->watermark = FirstWatermark(spec, since);
    if (generation != 0) job->generation = generation;
    if (resume != nullptr) job->generation = resume->generation;
    if (resume != nullptr && resume->watermark != absl::InfinitePast()) {
      // The store's watermark says which fires are decided already; the ones
      // after it that came due while no scheduler ran are due now.
      job->watermark = resume->watermark;
    } else {
      // Stored at once, so that a restart before the first fire resumes from
      // here: every fire after the add is decided, none silently dropped.
      RecordWatermark(*job, &persist);
    }
    job_slots_[slot] = std::move(job);
    jobs_.insert(SlotEntry(slot, job_slots_[slot]->key));
    if (resume != nullptr) TakeOver(*job_slots_[slot], *resume, now, out);
    ArmJob(*job_slots_[slot], now);
  } else {
    Job& job = *job_slots_[it->slot()];
    const JobSpec old = job.packed.Unpack();
    const bool schedule_changed =
        old.trigger != spec.trigger || old.start != spec.start ||
        old.end != spec.end ||
        (generation != 0 && generation != job.generation);
    // Pausing goes through PauseJob/ResumeJob below, which record the misses.
    const bool was_paused = job.paused;
    job.packed = std::move(packed);
    const Policy* policy = AcquirePolicy(spec);
    ReleasePolicy(job.policy);
    job.policy = policy;
    if (schedule_changed) {
      // Fires of the old schedule that came due while paused are recorded now,
      // under the old generation: resuming looks only at the new schedule.
      if (was_paused) RecordPausedMisses(job, now, &persist);
      CancelDecidedAhead(job, "schedule changed", now, out);
      job.generation = generation != 0 ? generation : job.generation + 1;
      job.source = std::move(source);
      // The new schedule's first fire is its first after the request -- even
      // when the old one's watermark is later (a fire decided ahead, a
      // backward clock step): FireKeys carry the generation, so nothing can
      // collide, and nothing of the new schedule is covered without a record.
      // (A one-shot time already past is due at once, as for a new job.)
      job.watermark = FirstWatermark(spec, since);
      RecordWatermark(job, &persist);
      // Buffered fires of the old schedule are dropped. FinishRun takes each
      // out of the buffer.
      while (!job.buffered().empty()) {
        FinishRun(*runs_.at(job.buffered().front()), RunState::kCancelled,
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
  DecideWaitingFire(*found, now, out);
  Job& job = *found;
  // Fires that came due while the job was paused get their record now: no
  // resume will come.
  if (job.paused) {
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
  for (RunId id : Job::RunIds(job.runs)) {
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
  DecideWaitingFire(*found, now, out);
  Job& job = *found;
  if (job.paused) return absl::OkStatus();
  job.paused = true;
  CancelDecidedAhead(job, "job paused", now, out);
  ArmJob(job, now);
  Step(now, out);
  return absl::OkStatus();
}

absl::Status Plan::ResumeJob(const JobKey& key, Now now, Output* out) {
  ASSIGN_OR_RETURN(Job * found, FindJob(key));
  Step(now, out);
  DecideWaitingFire(*found, now, out);
  Job& job = *found;
  if (!job.paused) return absl::OkStatus();
  job.paused = false;
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
    RecordWatermark(job, persist);
  }
  // The end date passed while paused: that is recorded too.
  RecordEnded(job, now, persist);
}

absl::StatusOr<RunId> Plan::TriggerJob(const JobKey& key, Now now,
                                       Output* out) {
  ASSIGN_OR_RETURN(Job * found, FindJob(key));
  Step(now, out);
  DecideWaitingFire(*found, now, out);
  Job& job = *found;
  PersistAction persist;
  const size_t before = persist.claims.size();
  absl::Time at = absl::UnixEpoch() + absl::Floor(now.wall - absl::UnixEpoch(),
                                                  absl::Milliseconds(1));
  // Two manual fires must never share a FireKey (the second claim would collide
  // with the first): a trigger within the same millisecond as the previous one,
  // or after a backward clock step, takes the next free millisecond.
  if (at <= job.last_manual()) at = job.last_manual() + absl::Milliseconds(1);
  DecideFire(job, at, now, &persist, out, /*manual=*/true);
  RunId run = persist.claims.size() > before ? persist.claims.back().run : 0;
  if (run != 0) job.Go().last_manual = at;
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

const Plan::Job* Plan::Find(const JobKey& key) const {
  auto it = jobs_.find(key);
  return it == jobs_.end() ? nullptr : job_slots_[it->slot()].get();
}

absl::Time Plan::NextFireTime(const JobKey& key) const {
  const Job* job = Find(key);
  if (job == nullptr || job->paused) return absl::InfiniteFuture();
  return job->source.Next(job->watermark);
}

const PackedSpec* Plan::Packed(const JobKey& key) const {
  const Job* job = Find(key);
  return job == nullptr ? nullptr : &job->packed;
}

const PackedSpec* Plan::PackedAt(uint32_t slot) const {
  if (slot >= job_slots_.size() || job_slots_[slot] == nullptr) return nullptr;
  return &job_slots_[slot]->packed;
}

std::optional<uint32_t> Plan::JobSlot(const JobKey& key) const {
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return std::nullopt;
  return it->slot();
}

std::vector<JobKey> Plan::JobKeys() const {
  std::vector<JobKey> keys;
  keys.reserve(jobs_.size());
  for (SlotEntry e : jobs_) keys.push_back(job_slots_[e.slot()]->key);
  return keys;
}

bool Plan::IsPaused(const JobKey& key) const {
  const Job* job = Find(key);
  return job != nullptr && job->paused;
}

size_t Plan::num_paused_jobs() const {
  size_t n = 0;
  for (SlotEntry e : jobs_) n += job_slots_[e.slot()]->paused;
  return n;
}

int64_t Plan::Generation(const JobKey& key) const {
  const Job* job = Find(key);
  return job == nullptr ? 0 : job->generation;
}

int64_t Plan::GenerationAt(uint32_t slot) const {
  if (slot >= job_slots_.size() || job_slots_[slot] == nullptr) return 0;
  return job_slots_[slot]->generation;
}

absl::Time Plan::Watermark(const JobKey& key) const {
  const Job* job = Find(key);
  return job == nullptr ? absl::InfinitePast() : job->watermark;
}

std::optional<RunState> Plan::GetRunState(RunId run) const {
  auto it = runs_.find(run);
  if (it == runs_.end()) return std::nullopt;
  return it->second->state;
}

}  // namespace chime::core
