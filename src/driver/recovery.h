// Recovery: what a starting scheduler takes over from its store.
//
// Recover() runs once, when the driver is created, before any job is added:
//   1. acquires the scheduler lease (its token fences every later write, and
//      is what the attempts receive as their fencing token); a store that
//      grants it to another live holder is refused with FailedPrecondition;
//      so is a grant that shows this process's clock off from the store's by
//      more than `max_clock_skew` (the lease is released again at once);
//   2. reads every job the store knows, deleted ones included (their
//      generations continue when they are added again);
//   3. records every run an earlier scheduler left unfinished (pending,
//      running or retrying) as lost -- it may or may not have run, and nobody
//      is watching it any more -- and collects them, with the runs left lost
//      by an earlier recovery; except a pending run whose scheduled time is
//      still ahead (claimed ahead with the lookahead): it cannot have started,
//      so it is kept pending for the job to adopt. "Still ahead" by the
//      store's clock plus max_clock_skew when there is a bound (the clock
//      that claimed it may have been that far ahead), by this process's
//      clock otherwise. A lost run's recorded
//      attempt is the highest that may have started (transitions are written
//      behind the attempts), so that no attempt number is used twice;
//   4. notes the highest RunId, so that new runs continue after it.
// The driver then resumes each job when it is added again (ResumeFor), adopts
// its pending runs, and restarts its lost runs if the job's delivery is
// at-least-once.
//
// Thread-safety: plain data and a function.
#ifndef CHIME_SRC_DRIVER_RECOVERY_H_
#define CHIME_SRC_DRIVER_RECOVERY_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "chime/clock.h"
#include "chime/scheduler.h"
#include "chime/store.h"
#include "src/core/plan.h"
#include "src/driver/clock_offset.h"
#include "src/driver/fences.h"
#include "src/driver/shard_keeper.h"

namespace chime::driver {

struct Recovered {
  Fence fence;          // the lease just granted
  std::string holder;   // its holder string
  MonoTime granted_at;  // when it was asked for (its ttl counts from there)
  // This process's clock against the store's, measured by the grant, and
  // the store's time the grant said (LeaseGrant::store_time).
  std::optional<ClockOffset> clock_offset;
  absl::Time store_time = absl::InfinitePast();
  RunId max_run_id = 0;
  // Every job the store knows, live or deleted, by key.
  absl::flat_hash_map<JobKey, JobRecord> jobs;
  // Runs recorded lost (now or by an earlier recovery), by job: restarted if
  // the job, once added again, is at-least-once.
  absl::flat_hash_map<JobKey, std::vector<core::LostRun>> lost;
  // Runs claimed ahead whose time has not come, by job: the job adopts them
  // when added again (Resume::claimed).
  absl::flat_hash_map<JobKey, std::vector<core::LostRun>> pending;
  // What step 3 recorded, for on_run_event.
  std::vector<RunEvent> events;
};

// The start of Recover's refusal when another holder has the lease, and when
// this clock is off by more than max_clock_skew.
inline constexpr absl::string_view kLeaseHeldElsewhere =
    "another scheduler holds the store's lease";
inline constexpr absl::string_view kClockSkewRefusal =
    "not taking the store's lease: ";

// `holder` names this process in the lease (e.g. "host:pid"); `ttl` is the
// lease's lifetime. Errors: the store's (the message says which step).
absl::StatusOr<Recovered> Recover(Store& store, Clock& clock,
                                  absl::string_view holder, absl::Duration ttl,
                                  absl::Duration max_clock_skew);

// Step 1 of Recover for lease `lease` (Recover's is kSchedulerLease; a node
// of a sharded cluster takes its member lease): the lease, its grant's time
// and this clock's offset; nothing else is set.
absl::StatusOr<Recovered> TakeLease(Store& store, Clock& clock,
                                    absl::string_view lease,
                                    absl::string_view holder,
                                    absl::Duration ttl,
                                    absl::Duration max_clock_skew);

// A node of a sharded cluster (SchedulerOptions::shards) takes shards over
// one batch at a time: the shard leases were just acquired (`gained`), and
// steps 2 and 3 of Recover run for the jobs in those shards only (by
// `fences.ShardOf`), each run's writes under its shard's lease. A pending
// run of a shard its last holder released (GainedShard::released) is kept
// pending whatever its time: it never started. Recovered::fence and
// max_run_id are not set.
absl::StatusOr<Recovered> RecoverShards(Store& store, Clock& clock,
                                        const Fences& fences,
                                        absl::Span<const GainedShard> gained,
                                        absl::Duration max_clock_skew);

// How a job the Plan does not know yet continues what `stored` (its record in
// the store, live or deleted) left: the generation its fires carry -- the
// store's, bumped if the schedule changed or the job was deleted, as PutJobs
// will do -- and that generation's watermark, if the store has one.
core::Resume ResumeFor(const JobRecord& stored, const JobSpec& spec);

}  // namespace chime::driver

#endif  // CHIME_SRC_DRIVER_RECOVERY_H_
