// MemoryStore: leases, jobs and fires. Runs are in memory_store_runs.cc.
#include "src/store/memory_store.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/store/store_util.h"

namespace chime::store {

MemoryStore::MemoryStore(Options options)
    : clock_(options.clock != nullptr ? *options.clock : RealClock::Get()),
      options_(options) {}

// --- Leases ---

absl::StatusOr<LeaseGrant> MemoryStore::AcquireLease(absl::string_view name,
                                                     absl::string_view holder,
                                                     absl::Duration ttl,
                                                     MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  RETURN_IF_ERROR(ValidateLeaseRequest(name, holder, ttl));
  absl::MutexLock lock(&mu_);
  const MonoTime now = clock_.MonoNow();
  Lease& lease = leases_[std::string(name)];
  if (!lease.holder.empty() && lease.holder != holder && lease.expires > now) {
    return absl::AlreadyExistsError(absl::StrCat(
        "lease \"", name, "\" is held by \"", lease.holder, "\" for another ",
        absl::FormatDuration(lease.expires - now)));
  }
  if (lease.holder != holder) {
    lease.holder = std::string(holder);
    lease.token = ++last_token_;
  }
  lease.expires = now + ttl;
  return LeaseGrant{lease.token, ttl, clock_.Now()};
}

absl::Status MemoryStore::CheckFenceLocked(const Fence& fence) const {
  auto it = leases_.find(fence.lease);
  const int64_t current =
      it == leases_.end() || it->second.holder.empty() ? 0 : it->second.token;
  if (current == 0 || current != fence.token) {
    return FencedError(fence, current);
  }
  return absl::OkStatus();
}

absl::StatusOr<LeaseGrant> MemoryStore::RenewLease(const Fence& fence,
                                                   absl::Duration ttl,
                                                   MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  RETURN_IF_ERROR(ValidateLeaseRequest(fence.lease, "renewer", ttl));
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckFenceLocked(fence));
  leases_[fence.lease].expires = clock_.MonoNow() + ttl;
  return LeaseGrant{fence.token, ttl, clock_.Now()};
}

absl::Status MemoryStore::ReleaseLease(const Fence& fence, MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  absl::MutexLock lock(&mu_);
  auto it = leases_.find(fence.lease);
  if (it != leases_.end() && it->second.token == fence.token &&
      it->second.holder.empty()) {
    return absl::OkStatus();  // released before: a re-send
  }
  RETURN_IF_ERROR(CheckFenceLocked(fence));
  it->second.holder.clear();
  it->second.expires = MonoTime();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<LeaseInfo>> MemoryStore::ListLeases(
    MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  absl::MutexLock lock(&mu_);
  const MonoTime now = clock_.MonoNow();
  std::vector<LeaseInfo> out;
  for (const auto& [name, lease] : leases_) {
    out.push_back(
        LeaseInfo{name, lease.holder, lease.token,
                  lease.holder.empty()
                      ? absl::ZeroDuration()
                      : std::max(absl::ZeroDuration(), lease.expires - now)});
  }
  return out;
}

// --- Jobs ---

void MemoryStore::TouchJobLocked(JobRecord& job) {
  if (job.revision != 0) changes_.erase(job.revision);
  job.revision = ++revision_;
  changes_[job.revision] = job.id;
}

absl::StatusOr<std::vector<JobRecord>> MemoryStore::PutJobs(
    absl::Span<const JobWrite> writes, MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  RETURN_IF_ERROR(ValidateJobWrites(writes));
  absl::MutexLock lock(&mu_);
  std::vector<JobPutPlan> plans;
  plans.reserve(writes.size());
  for (const JobWrite& w : writes) {
    auto it = job_ids_.find(w.spec.key);
    const JobRecord* existing =
        it == job_ids_.end() ? nullptr : &jobs_[it->second];
    ASSIGN_OR_RETURN(JobPutPlan plan, PlanJobPut(existing, w));
    plans.push_back(plan);
  }
  std::vector<JobRecord> out;
  out.reserve(writes.size());
  for (size_t i = 0; i < writes.size(); ++i) {
    auto [it, inserted] = job_ids_.try_emplace(writes[i].spec.key, 0);
    if (inserted) it->second = ++last_job_id_;
    JobRecord& job = jobs_[it->second];
    if (plans[i].write) {
      job.id = it->second;
      ApplyJobPut(plans[i], writes[i], &job);
      TouchJobLocked(job);
    }
    out.push_back(job);
  }
  return out;
}

absl::Status MemoryStore::DeleteJob(const JobKey& key,
                                    int64_t expected_revision,
                                    MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  absl::MutexLock lock(&mu_);
  auto it = job_ids_.find(key);
  JobRecord* job = it == job_ids_.end() ? nullptr : &jobs_[it->second];
  ASSIGN_OR_RETURN(bool write, PlanJobDelete(job, key, expected_revision));
  if (!write) return absl::OkStatus();
  job->deleted = true;
  TouchJobLocked(*job);
  return absl::OkStatus();
}

absl::StatusOr<JobRecord> MemoryStore::GetJob(const JobKey& key,
                                              MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  absl::MutexLock lock(&mu_);
  auto it = job_ids_.find(key);
  if (it == job_ids_.end() || jobs_[it->second].deleted) {
    return JobNotFoundError(key);
  }
  return jobs_[it->second];
}

absl::StatusOr<JobPage> MemoryStore::LoadJobs(JobId after, int limit,
                                              MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  RETURN_IF_ERROR(ValidateLimit(limit));
  absl::MutexLock lock(&mu_);
  JobPage page;
  page.revision = revision_;
  page.next_after = after;
  auto it = jobs_.upper_bound(after);
  for (; it != jobs_.end(); ++it) {
    if (it->second.deleted) continue;
    if (static_cast<int>(page.jobs.size()) == limit) break;
    page.jobs.push_back(it->second);
    page.next_after = it->first;
  }
  page.done = it == jobs_.end();
  return page;
}

absl::StatusOr<JobChanges> MemoryStore::JobChangesSince(int64_t revision,
                                                        int limit,
                                                        MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  RETURN_IF_ERROR(ValidateLimit(limit));
  absl::MutexLock lock(&mu_);
  JobChanges out;
  out.revision = std::max(revision, revision_);
  for (auto it = changes_.upper_bound(revision); it != changes_.end(); ++it) {
    if (static_cast<int>(out.changes.size()) == limit) {
      out.revision = out.changes.back().revision;
      break;
    }
    out.changes.push_back(jobs_[it->second]);
  }
  return out;
}

// --- Fires ---

absl::Status MemoryStore::ClaimFires(const Fence& fence,
                                     const ClaimBatch& batch,
                                     MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  RETURN_IF_ERROR(ValidateClaimBatch(batch));
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckFenceLocked(fence));
  auto known = [&](JobId job) -> absl::Status {
    if (jobs_.contains(job)) return absl::OkStatus();
    return UnknownJobIdError(job);
  };
  // Check everything before writing anything: the batch is all or nothing.
  // `fresh` holds the claims to create (not re-sends), by fire and by run, so
  // that two claims of one batch conflict with each other too.
  absl::flat_hash_map<FireRef, RunId> fresh_fires;
  absl::flat_hash_map<RunId, FireRef> fresh_runs;
  std::vector<bool> create(batch.claims.size(), false);
  for (size_t i = 0; i < batch.claims.size(); ++i) {
    const FireClaim& c = batch.claims[i];
    RETURN_IF_ERROR(known(c.fire.job));
    auto fire = fires_.find(c.fire);
    if (fire != fires_.end()) {
      if (fire->second != c.run) {
        return ClaimConflictError(c.fire, fire->second, c.run);
      }
      continue;  // the same claim again
    }
    auto run = runs_.find(c.run);
    if (run != runs_.end()) {
      return RunIdReusedError(c.run, run->second.detail.run.fire, c.fire);
    }
    auto [f, f_new] = fresh_fires.try_emplace(c.fire, c.run);
    if (!f_new && f->second != c.run) {
      return ClaimConflictError(c.fire, f->second, c.run);
    }
    auto [r, r_new] = fresh_runs.try_emplace(c.run, c.fire);
    if (!r_new && !(r->second == c.fire)) {
      return RunIdReusedError(c.run, r->second, c.fire);
    }
    create[i] = f_new;
  }
  for (const MissedRecord& m : batch.missed) RETURN_IF_ERROR(known(m.job));
  for (size_t i = 0; i < batch.watermarks.size(); ++i) {
    const WatermarkAdvance& w = batch.watermarks[i];
    RETURN_IF_ERROR(known(w.job));
    RETURN_IF_ERROR(CheckWatermarkAdvance(i, w, jobs_[w.job].generation));
  }

  for (size_t i = 0; i < batch.claims.size(); ++i) {
    if (!create[i]) continue;
    const FireClaim& c = batch.claims[i];
    fires_[c.fire] = c.run;
    Run& run = runs_[c.run];
    run.detail.run = RunRecord{c.run,       c.fire,   RunState::kPending, 0,
                               fence.token, batch.at, batch.at,           ""};
    run.detail.transitions.reserve(4);  // pending, running, an outcome
    run.bytes = kRunBaseBytes;
    run_bytes_ += run.bytes;
    max_run_id_ = std::max(max_run_id_, c.run);
  }
  for (const MissedRecord& m : batch.missed) {
    const MissedKey key{m.job, m.first, m.reason, m.generation};
    if (!missed_.try_emplace(key, m).second ||
        options_.max_missed_records == 0) {
      continue;
    }
    missed_order_.push_back(key);
    while (missed_order_.size() > options_.max_missed_records) {
      missed_.erase(missed_order_.front());
      missed_order_.pop_front();
    }
  }
  for (const WatermarkAdvance& w : batch.watermarks) {
    JobRecord& job = jobs_[w.job];
    AdvanceWatermark(w, &job.watermark_generation, &job.watermark);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ClaimInfo>> MemoryStore::LookupClaims(
    absl::Span<const FireRef> fires, MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  absl::MutexLock lock(&mu_);
  std::vector<ClaimInfo> out;
  out.reserve(fires.size());
  for (const FireRef& f : fires) {
    auto it = fires_.find(f);
    if (it == fires_.end()) {
      out.push_back(ClaimInfo{});
      continue;
    }
    out.push_back(ClaimInfo{it->second, runs_.at(it->second).detail.run.token});
  }
  return out;
}

absl::StatusOr<MissedPage> MemoryStore::ListMissed(
    JobId job, const std::optional<MissedCursor>& after, int limit,
    MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  RETURN_IF_ERROR(ValidateLimit(limit));
  absl::MutexLock lock(&mu_);
  MissedPage page;
  auto it = after ? missed_.upper_bound(MissedKey{
                        job, after->first, after->reason, after->generation})
                  : missed_.lower_bound(
                        MissedKey{job, absl::InfinitePast(), MissReason{}, 0});
  for (; it != missed_.end() && std::get<0>(it->first) == job; ++it) {
    if (static_cast<int>(page.records.size()) == limit) {
      const MissedRecord& last = page.records.back();
      page.next = MissedCursor{last.first, last.reason, last.generation};
      break;
    }
    page.records.push_back(it->second);
  }
  return page;
}

}  // namespace chime::store
