// The value types of the Store interface (chime/store.h): what a store keeps
// about leases, jobs, fires, runs and idempotency keys.
//
// They are plain structs, sized for the hot path: the scheduler pushes about
// 100,000 claims a second through Store::ClaimFires, so a claim names its job
// by the store-assigned JobId (an integer, never a string) and carries no
// allocation of its own. Jobs keep their readable JobKey in JobRecord.
//
// Times are wall times supplied by the caller (scheduled times come from the
// schedule; transition times from the scheduler's clock), except lease
// lifetimes, which the store measures on its own monotonic clock.
//
// RunState and MissReason mirror chime::core::RunState and core::MissReason
// enumerator for enumerator and in the same order (RunState adds kLost); the
// core is meant to alias them once the driver runs on a Store.
//
// Thread-safety: value types; no shared state.
#ifndef CHIME_INCLUDE_CHIME_STORE_TYPES_H_
#define CHIME_INCLUDE_CHIME_STORE_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "chime/job.h"
#include "chime/run_state.h"

namespace chime {

// Assigned by the store when a job is first put; stable for the store's
// lifetime, kept by a deleted job's tombstone and reused when the same JobKey
// is put again. Never 0.
using JobId = int64_t;
// Chosen by the scheduler when it claims a fire; unique in the store (a claim
// reusing a RunId of another fire is refused). Never 0.
using RunId = uint64_t;

// --- Leases ---

// The leases chime's daemons take: the scheduler's (its holder schedules;
// docs/cluster.md), each node's member lease, kMemberLeasePrefix + the
// node's name, and with shards each shard's, kShardLeasePrefix + its number.
inline constexpr absl::string_view kSchedulerLease = "scheduler";
inline constexpr absl::string_view kMemberLeasePrefix = "member/";
inline constexpr absl::string_view kShardLeasePrefix = "shard/";

// Presented with every fenced write: the write applies only while `token` is
// the current token of lease `lease`.
struct Fence {
  std::string lease;
  int64_t token = 0;
};

struct LeaseGrant {
  int64_t token = 0;
  // The holder may act on the lease until (its own monotonic time when it sent
  // the request) + ttl; renew well before.
  absl::Duration ttl;
  // The store's wall clock when it granted or renewed the lease (the
  // database's, for a shared store): the holder compares it with its own to
  // measure how far its clock is off (src/driver/clock_offset.h).
  // InfinitePast when the store does not say.
  absl::Time store_time = absl::InfinitePast();
};

struct LeaseInfo {
  std::string name;
  std::string holder;  // empty once released
  int64_t token = 0;   // the last token granted
  // Left of the lease's time to live, by the store's clock (zero: expired or
  // released; another holder may acquire it).
  absl::Duration remaining;
};

// --- Jobs ---

// PutJobs / DeleteJob compare-and-set: the revision the caller last read.
inline constexpr int64_t kAnyRevision = -1;  // unconditional
inline constexpr int64_t kNoRevision = 0;    // must not exist (create)

struct JobRecord {
  JobId id = 0;
  JobSpec spec;
  // 1 for a new job; +1 whenever the trigger, start or end changes, and when a
  // deleted job is put again, so fires of old and new schedules never collide.
  int64_t generation = 0;
  // The store revision of the job's last change (put or delete).
  int64_t revision = 0;
  // The newest scheduled time whose fate is decided, in generation
  // watermark_generation (InfinitePast if none was written).
  absl::Time watermark = absl::InfinitePast();
  // The generation `watermark` belongs to; 0 with InfinitePast when none was
  // written. Puts and deletes keep the pair as it is, so after a schedule
  // change it is below `generation` until the scheduler advances the new
  // generation's watermark: a scheduler that finds watermark_generation <
  // generation starts the new generation afresh (at the change) instead of
  // resuming from the old generation's watermark.
  int64_t watermark_generation = 0;
  bool deleted = false;  // a tombstone (only in JobChangesSince)
};

struct JobWrite {
  JobSpec spec;
  int64_t expected_revision = kAnyRevision;
  // Where the job's fires start to be decided, if this write creates the job
  // (or puts a deleted one back) or changes its generation: its watermark is
  // then this, for the new generation, in the same transaction -- so a
  // scheduler that takes the job in needs no write of its own before a
  // restart would find every fire after it. InfinitePast: the watermark is
  // kept as it is.
  absl::Time watermark = absl::InfinitePast();
  // A creation only: the job must not exist (or be deleted), even with a
  // spec equal to this one -- which a put otherwise accepts as a re-send --
  // and Aborted if it does. expected_revision is then not looked at.
  bool create_only = false;
};

struct JobPage {
  std::vector<JobRecord> jobs;  // ascending JobId, no tombstones
  JobId next_after = 0;         // pass to the next LoadJobs call
  bool done = false;            // no job has an id above next_after
  // The store revision when the page was read; watch from the first page's.
  int64_t revision = 0;
};

struct JobChanges {
  std::vector<JobRecord> changes;  // ascending revision, tombstones included
  int64_t revision = 0;            // pass to the next JobChangesSince call
};

// --- Fires ---

// One fire: FireKey with the job by id.
struct FireRef {
  JobId job = 0;
  int64_t generation = 0;
  absl::Time scheduled_time;
  bool manual = false;
  friend bool operator==(const FireRef&, const FireRef&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const FireRef& f) {
    return H::combine(std::move(h), f.job, f.generation, f.scheduled_time,
                      f.manual);
  }
};

struct FireClaim {
  FireRef fire;
  RunId run = 0;
};

// Fires in [first, last] of one job generation that did not run, for one
// reason (MissedRange in src/core/misfire.h). Skipped fires (overlap) are
// recorded the same way.
struct MissedRecord {
  JobId job = 0;
  int64_t generation = 0;
  absl::Time first;
  absl::Time last;
  int64_t count = 0;
  bool count_capped = false;
  MissReason reason = MissReason::kMisfireSkip;
  friend bool operator==(const MissedRecord&, const MissedRecord&) = default;
};

// A job's watermark belongs to one of its generations (as
// core::PersistAction::Watermark does): a changed schedule starts its own
// watermark at the change, which may be earlier than the old generation's.
// A store keeps one (watermark_generation, watermark) pair per job, and an
// advance for generation g
//   - above the job's current generation is refused (InvalidArgument);
//   - above the stored watermark_generation replaces the pair, even with an
//     earlier time;
//   - equal to it moves the watermark forward only (an earlier one is
//     ignored);
//   - below it is ignored (a stale re-send).
// That is: the pair only grows, compared generation first, then time.
struct WatermarkAdvance {
  JobId job = 0;
  int64_t generation = 0;  // >= 1 and <= the job's current generation
  absl::Time watermark;
};

// What one scheduler step decided, written in one transaction by ClaimFires
// (core::PersistAction, with jobs by id).
struct ClaimBatch {
  std::vector<FireClaim> claims;
  std::vector<MissedRecord> missed;
  std::vector<WatermarkAdvance> watermarks;
  // When the claims were made (the new runs' created_at).
  absl::Time at;
};

// LookupClaims: the run that claimed a fire, or run == 0 if none did.
struct ClaimInfo {
  RunId run = 0;
  int64_t token = 0;
};

// Position in a job's missed records, listed by first, reason, generation.
struct MissedCursor {
  absl::Time first;
  MissReason reason = MissReason::kMisfireSkip;
  int64_t generation = 0;
};

struct MissedPage {
  std::vector<MissedRecord> records;
  std::optional<MissedCursor> next;  // nullopt: no more records
};

// --- Runs ---

struct RunTransition {
  RunId run = 0;
  RunState from = RunState::kPending;  // compare-and-set: the expected state
  RunState to = RunState::kRunning;
  // The attempt this transition starts (to == running) or ends (from ==
  // running); otherwise the run's current attempt number.
  int32_t attempt = 0;
  // The ending attempt's exit code or HTTP status (from == running).
  int32_t exit_code = 0;
  absl::Time at;
  std::string detail;  // why: "timed out", "retry in 2.5s", ...
  // The ending attempt's output (from == running); the store keeps the last
  // Options::max_output_bytes of it.
  std::string output;
};

struct RunRecord {
  RunId id = 0;
  FireRef fire;
  RunState state = RunState::kPending;
  int32_t attempt = 0;  // the latest attempt number (0 before the first)
  int64_t token = 0;    // the lease token of the last write
  absl::Time created_at;
  absl::Time updated_at;
  std::string detail;  // of the last transition
  // The readable key of fire.job, filled by ListRuns and GetRun (also when
  // the job is deleted: its runs stay, and so does its tombstone's key).
  JobKey job_key;
};

struct AttemptRecord {
  int32_t number = 0;
  int64_t token = 0;
  absl::Time started_at;
  absl::Time finished_at = absl::InfiniteFuture();  // still running
  RunState outcome = RunState::kRunning;  // the state the attempt ended in
  int32_t exit_code = 0;
  std::string detail;
  std::string output;
  bool output_truncated = false;  // the head was dropped
};

struct TransitionRecord {
  RunState from = RunState::kPending;
  RunState to = RunState::kPending;
  int32_t attempt = 0;
  int64_t token = 0;
  absl::Time at;
  std::string detail;
};

struct RunDetail {
  RunRecord run;
  std::vector<AttemptRecord> attempts;        // ascending number
  std::vector<TransitionRecord> transitions;  // in the order recorded
};

// Position in a run listing: runs are listed newest scheduled time first,
// then highest RunId first.
struct RunCursor {
  absl::Time scheduled_time;
  RunId run = 0;
};

struct RunQuery {
  std::optional<JobId> job;
  std::optional<RunState> state;
  // Scheduled times in [from, to).
  absl::Time from = absl::InfinitePast();
  absl::Time to = absl::InfiniteFuture();
  std::optional<RunCursor> after;  // the previous page's `next`
  int limit = 100;
};

struct RunPage {
  std::vector<RunRecord> runs;
  std::optional<RunCursor> next;  // nullopt: no more runs
};

// --- Retention ---

struct RetentionPolicy {
  int64_t keep_per_job = 0;  // keep the newest N finished runs per job; 0 = all
  absl::Duration max_age = absl::InfiniteDuration();  // by updated_at
  int64_t max_total_bytes = 0;                        // 0 = no cap
};

struct RetentionResult {
  int64_t runs_deleted = 0;
  int64_t missed_deleted = 0;
  int64_t idempotency_keys_deleted = 0;
};

// --- Idempotency keys ---

struct IdempotencyRecord {
  std::string key;
  std::string fingerprint;  // of the request, e.g. a hash of its body
  std::string response;     // what to answer a repeated request with
  absl::Time created_at;
  absl::Time expires_at;  // created_at + the dedupe window
};

struct IdempotencyOutcome {
  bool created = false;      // the key was new (or expired) and is now stored
  IdempotencyRecord stored;  // the record in force after the call
};

// --- Store-wide ---

struct StoreInfo {
  int64_t revision = 0;  // of the last job change
  RunId max_run_id = 0;  // the highest RunId ever claimed
  int64_t jobs = 0;      // not deleted
  int64_t runs = 0;
  int64_t run_bytes = 0;  // as counted by RetentionPolicy::max_total_bytes
};

}  // namespace chime

#endif  // CHIME_INCLUDE_CHIME_STORE_TYPES_H_
