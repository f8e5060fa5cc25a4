#include "src/driver/recovery.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/store/store_util.h"

namespace chime::driver {
namespace {

// Store calls made while recovering get this long each.
constexpr absl::Duration kCallTimeout = absl::Seconds(60);
constexpr int kPage = 1000;

absl::Status Step(absl::string_view what, const absl::Status& s) {
  if (s.ok()) return s;
  return absl::Status(s.code(),
                      absl::StrCat("recovery: ", what, ": ", s.message()));
}

// Which jobs a recovery takes over, and under which lease.
struct Scope {
  // The lease fencing the job's writes; nothing for a job out of scope.
  std::function<std::optional<Fence>(const JobKey&)> fence_of;
  // The lease for the runs of jobs the store no longer knows (none: they
  // are left alone).
  std::optional<Fence> unknown_jobs;
  // A pending run of the job scheduled after this time cannot have started.
  std::function<absl::Time(const JobKey&)> not_started_before;
};

// Steps 2 and 3 of Recover (recovery.h) for the jobs in `scope`, into `r`.
absl::Status TakeOverRuns(Store& store, Clock& clock, const Scope& scope,
                          Recovered& r) {
  const auto deadline = [&] { return clock.MonoNow() + kCallTimeout; };
  // Every job, tombstones included, in its latest state.
  absl::flat_hash_map<JobId, JobKey> keys;
  for (int64_t revision = 0;;) {
    absl::StatusOr<JobChanges> page =
        store.JobChangesSince(revision, kPage, deadline());
    if (!page.ok()) return Step("loading jobs", page.status());
    if (page->changes.empty()) break;
    revision = page->revision;
    for (JobRecord& job : page->changes) {
      keys[job.id] = job.spec.key;
      if (!scope.fence_of(job.spec.key).has_value()) continue;
      JobKey key = job.spec.key;
      r.jobs.insert_or_assign(std::move(key), std::move(job));
    }
  }
  const auto fire_key = [&](const RunRecord& run) -> std::optional<FireKey> {
    auto key = keys.find(run.fire.job);
    if (key == keys.end()) return std::nullopt;  // the store lost the job
    return FireKey{key->second, run.fire.generation, run.fire.scheduled_time,
                   run.fire.manual};
  };
  // The lease of a run's writes; nothing if out of scope.
  const auto fence_of = [&](const std::optional<FireKey>& fire) {
    return fire.has_value() ? scope.fence_of(fire->job) : scope.unknown_jobs;
  };

  // Runs left unfinished: gather first (the listing pages by state), then
  // record them lost.
  std::vector<RunRecord> unfinished;
  std::vector<RunRecord> lost;
  for (RunState state : {RunState::kPending, RunState::kRunning,
                         RunState::kRetrying, RunState::kLost}) {
    RunQuery query;
    query.state = state;
    query.limit = kPage;
    while (true) {
      absl::StatusOr<RunPage> page = store.ListRuns(query, deadline());
      if (!page.ok()) return Step("listing unfinished runs", page.status());
      for (RunRecord& run : page->runs) {
        if (!fence_of(fire_key(run)).has_value()) continue;
        (state == RunState::kLost ? lost : unfinished).push_back(run);
      }
      if (!page->next.has_value()) break;
      query.after = page->next;
    }
  }
  const absl::Time now = clock.Now();
  // By lease: the transitions to write under it.
  absl::flat_hash_map<std::string, std::pair<Fence, std::vector<RunTransition>>>
      batches;
  size_t batched = 0;
  const auto flush = [&]() -> absl::Status {
    for (auto& [lease, batch] : batches) {
      if (batch.second.empty()) continue;
      RETURN_IF_ERROR(
          Step("recording unfinished runs lost",
               store.TransitionRuns(batch.first, batch.second, deadline())));
      batch.second.clear();
    }
    batched = 0;
    return absl::OkStatus();
  };
  // Lost by an earlier recovery: the attempt it restarted may have begun.
  for (RunRecord& run : lost) ++run.attempt;
  for (RunRecord& run : unfinished) {
    const std::optional<FireKey> fire = fire_key(run);
    if (run.state == RunState::kPending && fire.has_value() &&
        run.fire.scheduled_time > scope.not_started_before(fire->job)) {
      r.pending[fire->job].push_back(core::LostRun{run.id, *fire, run.attempt});
      continue;
    }
    // Running: its attempt began. Pending or retrying: the next one may have
    // (its running transition is written behind it).
    const int32_t may_have_started =
        run.state == RunState::kRunning ? run.attempt : run.attempt + 1;
    std::string detail =
        absl::StrCat("the scheduler stopped while the run was ",
                     RunStateName(run.state), " (token ", run.token, ")");
    r.events.push_back(RunEvent{
        run.id,
        fire.has_value() ? fire->ToString() : store::FireRefString(run.fire),
        std::string(RunStateName(run.state)), "lost", may_have_started, detail,
        now, fire.value_or(FireKey{})});
    const Fence fence = *fence_of(fire);
    auto& batch =
        batches.try_emplace(fence.lease, fence, std::vector<RunTransition>{})
            .first->second;
    batch.second.push_back(RunTransition{run.id, run.state, RunState::kLost,
                                         may_have_started, 0, now,
                                         std::move(detail), ""});
    if (++batched >= kPage) RETURN_IF_ERROR(flush());
    run.state = RunState::kLost;
    run.attempt = may_have_started;
    lost.push_back(std::move(run));
  }
  RETURN_IF_ERROR(flush());

  for (const RunRecord& run : lost) {
    const std::optional<FireKey> fire = fire_key(run);
    if (!fire.has_value()) continue;
    core::LostRun taken{run.id, *fire, run.attempt};
    // Runs that will start again (at-least-once) say how often they were
    // lost, for PlanOptions::max_losses: their history, read one by one (a
    // crash leaves few).
    if (auto job = r.jobs.find(fire->job);
        job != r.jobs.end() &&
        job->second.spec.delivery == Delivery::kAtLeastOnce) {
      absl::StatusOr<RunDetail> detail = store.GetRun(run.id, deadline());
      if (!detail.ok())
        return Step("reading a lost run's history", detail.status());
      for (const TransitionRecord& t : detail->transitions)
        taken.losses += t.to == RunState::kLost ? 1 : 0;
    }
    r.lost[fire->job].push_back(std::move(taken));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Recovered> TakeLease(Store& store, Clock& clock,
                                    absl::string_view lease,
                                    absl::string_view holder,
                                    absl::Duration ttl,
                                    absl::Duration max_clock_skew) {
  const auto deadline = [&] { return clock.MonoNow() + kCallTimeout; };
  Recovered r;
  r.holder = std::string(holder);
  r.granted_at = clock.MonoNow();
  const absl::Time sent = clock.Now();
  absl::StatusOr<LeaseGrant> grant =
      store.AcquireLease(lease, holder, ttl, deadline());
  if (absl::IsAlreadyExists(grant.status())) {
    return absl::FailedPreconditionError(absl::StrCat(
        kLeaseHeldElsewhere, " \"", lease, "\": ", grant.status().message()));
  }
  if (!grant.ok()) return Step("acquiring the lease", grant.status());
  r.fence = Fence{std::string(lease), grant->token};
  r.store_time = grant->store_time;
  r.clock_offset = MeasureClockOffset(grant->store_time, sent, clock.Now());
  if (r.clock_offset.has_value() &&
      r.clock_offset->SurelyExceeds(max_clock_skew)) {
    // Fires would start early or late by the offset: leave the lease to a
    // node whose clock agrees with the store's.
    (void)store.ReleaseLease(r.fence, deadline());
    return absl::FailedPreconditionError(
        absl::StrCat(kClockSkewRefusal, r.clock_offset->ToString(),
                     ", more than max_clock_skew (",
                     absl::FormatDuration(max_clock_skew), ")"));
  }
  return r;
}

absl::StatusOr<Recovered> Recover(Store& store, Clock& clock,
                                  absl::string_view holder, absl::Duration ttl,
                                  absl::Duration max_clock_skew) {
  const auto deadline = [&] { return clock.MonoNow() + kCallTimeout; };
  ASSIGN_OR_RETURN(Recovered r, TakeLease(store, clock, kSchedulerLease, holder,
                                          ttl, max_clock_skew));
  // Nodes with shards schedule this store: one scheduler for every job
  // beside them would decide the same fires (the store would let only one
  // claim each, but lost runs could start twice). Wait for them to go.
  absl::StatusOr<std::vector<LeaseInfo>> leases = store.ListLeases(deadline());
  if (!leases.ok()) return Step("reading the leases", leases.status());
  for (const LeaseInfo& l : *leases) {
    if (!absl::StartsWith(l.name, kShardLeasePrefix) || l.holder.empty() ||
        l.remaining <= absl::ZeroDuration()) {
      continue;
    }
    (void)store.ReleaseLease(r.fence, deadline());
    return absl::FailedPreconditionError(absl::StrCat(
        kLeaseHeldElsewhere, ": nodes with shards schedule this store (",
        l.name, " is held by ", l.holder,
        "); give every node of the store the same `shards`"));
  }
  absl::StatusOr<StoreInfo> info = store.GetInfo(deadline());
  if (!info.ok()) return Step("reading the store", info.status());
  r.max_run_id = info->max_run_id;

  // A run claimed ahead and still pending cannot have started while its
  // time is ahead of the clock of the scheduler that claimed it. That clock
  // may have been up to max_clock_skew ahead of the store's (the bound every
  // scheduler on the store keeps; its time is capped there), so with a
  // bound the store's clock plus the bound decides -- never this process's
  // own clock, which a predecessor's may have been ahead of. Without one,
  // this clock (one process on its own store).
  absl::Time not_started_before = clock.Now();
  if (max_clock_skew != absl::InfiniteDuration() &&
      r.store_time != absl::InfinitePast()) {
    not_started_before =
        r.store_time + (clock.MonoNow() - r.granted_at) + max_clock_skew;
  }
  Scope scope;
  scope.fence_of = [&r](const JobKey&) -> std::optional<Fence> {
    return r.fence;
  };
  scope.unknown_jobs = r.fence;
  scope.not_started_before = [&](const JobKey&) { return not_started_before; };
  RETURN_IF_ERROR(TakeOverRuns(store, clock, scope, r));
  return r;
}

absl::StatusOr<Recovered> RecoverShards(Store& store, Clock& clock,
                                        const Fences& fences,
                                        absl::Span<const GainedShard> gained,
                                        absl::Duration max_clock_skew) {
  Recovered r;
  absl::flat_hash_map<uint32_t, const GainedShard*> by_shard;
  absl::flat_hash_map<uint32_t, absl::Time> not_started_before;
  for (const GainedShard& g : gained) {
    by_shard[g.shard] = &g;
    // A shard its last holder released had every write of its runs done: a
    // pending run there never started, whatever its time (the holder took
    // it back). Otherwise, as Recover.
    absl::Time t = absl::InfinitePast();
    if (!g.released) {
      t = clock.Now();
      if (max_clock_skew != absl::InfiniteDuration() &&
          g.store_time != absl::InfinitePast()) {
        t = g.store_time + (clock.MonoNow() - g.granted_at) + max_clock_skew;
      }
    }
    not_started_before[g.shard] = t;
  }
  Scope scope;
  scope.fence_of = [&](const JobKey& key) -> std::optional<Fence> {
    auto it = by_shard.find(fences.ShardOf(key));
    if (it == by_shard.end()) return std::nullopt;
    return it->second->fence;
  };
  scope.not_started_before = [&](const JobKey& key) {
    return not_started_before.at(fences.ShardOf(key));
  };
  RETURN_IF_ERROR(TakeOverRuns(store, clock, scope, r));
  return r;
}

core::Resume ResumeFor(const JobRecord& stored, const JobSpec& spec) {
  core::Resume resume;
  resume.generation =
      stored.deleted || store::ScheduleChanged(stored.spec, spec)
          ? stored.generation + 1
          : stored.generation;
  if (stored.watermark_generation == resume.generation)
    resume.watermark = stored.watermark;
  return resume;
}

}  // namespace chime::driver
