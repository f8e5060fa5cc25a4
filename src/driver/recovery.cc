#include "src/driver/recovery.h"

#include <optional>
#include <utility>

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

}  // namespace

absl::StatusOr<Recovered> Recover(Store& store, Clock& clock,
                                  absl::string_view holder, absl::Duration ttl,
                                  absl::Duration max_clock_skew) {
  const auto deadline = [&] { return clock.MonoNow() + kCallTimeout; };
  Recovered r;
  r.granted_at = clock.MonoNow();
  const absl::Time sent = clock.Now();
  absl::StatusOr<LeaseGrant> grant =
      store.AcquireLease(kSchedulerLease, holder, ttl, deadline());
  if (absl::IsAlreadyExists(grant.status())) {
    return absl::FailedPreconditionError(
        absl::StrCat(kLeaseHeldElsewhere, " \"", kSchedulerLease,
                     "\": ", grant.status().message()));
  }
  if (!grant.ok()) return Step("acquiring the lease", grant.status());
  r.fence = Fence{std::string(kSchedulerLease), grant->token};
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

  absl::StatusOr<StoreInfo> info = store.GetInfo(deadline());
  if (!info.ok()) return Step("reading the store", info.status());
  r.max_run_id = info->max_run_id;

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
      JobKey key = job.spec.key;
      r.jobs.insert_or_assign(std::move(key), std::move(job));
    }
  }

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
        (state == RunState::kLost ? lost : unfinished).push_back(run);
      }
      if (!page->next.has_value()) break;
      query.after = page->next;
    }
  }
  const absl::Time now = clock.Now();
  // A run claimed ahead and still pending cannot have started while its
  // time is ahead of the clock of the scheduler that claimed it. That clock
  // may have been up to max_clock_skew ahead of the store's (the bound every
  // scheduler on the store keeps; its time is capped there), so with a
  // bound the store's clock plus the bound decides -- never this process's
  // own clock, which a predecessor's may have been ahead of. Without one,
  // this clock (one process on its own store).
  absl::Time not_started_before = now;
  if (max_clock_skew != absl::InfiniteDuration() &&
      r.store_time != absl::InfinitePast()) {
    not_started_before =
        r.store_time + (clock.MonoNow() - r.granted_at) + max_clock_skew;
  }
  const auto fire_key = [&](const RunRecord& run) -> std::optional<FireKey> {
    auto key = keys.find(run.fire.job);
    if (key == keys.end()) return std::nullopt;  // the store lost the job
    return FireKey{key->second, run.fire.generation, run.fire.scheduled_time,
                   run.fire.manual};
  };
  std::vector<RunTransition> batch;
  const auto flush = [&]() -> absl::Status {
    if (batch.empty()) return absl::OkStatus();
    absl::Status s = store.TransitionRuns(r.fence, batch, deadline());
    batch.clear();
    return Step("recording unfinished runs lost", s);
  };
  // Lost by an earlier recovery: the attempt it restarted may have begun.
  for (RunRecord& run : lost) ++run.attempt;
  for (RunRecord& run : unfinished) {
    const std::optional<FireKey> fire = fire_key(run);
    if (run.state == RunState::kPending &&
        run.fire.scheduled_time > not_started_before && fire.has_value()) {
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
    batch.push_back(RunTransition{run.id, run.state, RunState::kLost,
                                  may_have_started, 0, now, std::move(detail),
                                  ""});
    if (batch.size() >= kPage) RETURN_IF_ERROR(flush());
    run.state = RunState::kLost;
    run.attempt = may_have_started;
    lost.push_back(std::move(run));
  }
  RETURN_IF_ERROR(flush());

  for (const RunRecord& run : lost) {
    if (std::optional<FireKey> fire = fire_key(run); fire.has_value())
      r.lost[fire->job].push_back(core::LostRun{run.id, *fire, run.attempt});
  }
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
