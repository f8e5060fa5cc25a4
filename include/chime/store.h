// Store: chime's durable memory -- leases, jobs, fire claims, run history and
// idempotency keys -- behind one small interface that every backend
// implements and one conformance suite checks (tests/store_conformance/).
//
// Callers: the scheduler driver (leases, claims, transitions, recovery), the
// API (jobs, history, idempotency keys) and maintenance (retention).
// Implementations: store::MemoryStore (the reference), store::SqliteStore (the
// embedded default), store::PostgresStore (shared by a cluster),
// testing::FaultInjectionStore (wraps any Store); later etcd. Value types are
// in chime/store_types.h; docs/storage.md has the semantics in prose and the
// SQLite and PostgreSQL schemas.
//
// Results. Every method takes a deadline on the caller's monotonic clock (the
// Clock the store was built with) and answers one of:
//   ok            OK: done, and durable before it was acknowledged.
//   conflict      AlreadyExists: a create-if-absent key exists (a fire claimed
//                   by another run, a lease held by another holder);
//                 Aborted: a compare-and-set found another value (a job's
//                   revision, a run's state).
//                 Nothing was written; read the current value and decide.
//   fenced        FailedPrecondition: the Fence's token is not the lease's
//                 current token; nothing was written. Stop acting on the lease.
//   unavailable / Unavailable, DeadlineExceeded (or Internal, Unknown): for a
//   indeterminate read, it failed; for a write, it may or may not have been
//                 applied. Resolve by reading back (GetJob, LookupClaims,
//                 GetRun, ListLeases) or by re-sending the identical request,
//                 which every write accepts idempotently -- never by retrying
//                 under a new key (a new RunId, a new idempotency key).
//   NotFound (an unknown job or run), InvalidArgument (a malformed request,
//   naming the field), DataLoss (the stored data is unreadable) write nothing.
//
// Atomicity: each call is one transaction. A batch (PutJobs, ClaimFires,
// TransitionRuns) is applied entirely or not at all; the error names the
// offending item.
//
// Idempotency: re-sending a write that was applied succeeds and changes
// nothing: the same claim (same fire, same RunId), the same missed record, a
// watermark advance that does not raise the stored (generation, watermark)
// pair, a transition already in the run's history (same from, to, attempt),
// a put of the spec already stored, the release of a released lease.
//
// Thread-safety: every method may be called from any thread, concurrently.
#ifndef CHIME_INCLUDE_CHIME_STORE_H_
#define CHIME_INCLUDE_CHIME_STORE_H_

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "chime/clock.h"
#include "chime/job.h"
#include "chime/store_types.h"

namespace chime {

class Store {
 public:
  virtual ~Store() = default;

  // --- Leases. Tokens are strictly increasing across every grant the store
  // ever makes; a token is current until the lease is granted to another
  // holder or released. ---

  // Grants lease `name` to `holder` for `ttl` if it is free, released,
  // expired, or already held by `holder` (then: the same token, extended).
  // AlreadyExists when another holder's grant is still within its ttl.
  virtual absl::StatusOr<LeaseGrant> AcquireLease(absl::string_view name,
                                                  absl::string_view holder,
                                                  absl::Duration ttl,
                                                  MonoTime deadline) = 0;
  // Extends the lease for `ttl` from now. FailedPrecondition if the token is
  // not current (the lease was lost).
  virtual absl::StatusOr<LeaseGrant> RenewLease(const Fence& fence,
                                                absl::Duration ttl,
                                                MonoTime deadline) = 0;
  // RenewLease of each fence, as one call: one answer per fence, in order
  // (each as RenewLease's); an error of the whole call (unavailable) renews
  // none. A node renews its shard leases together. The default calls
  // RenewLease for each; a store may do all in one transaction.
  virtual absl::StatusOr<std::vector<absl::StatusOr<LeaseGrant>>> RenewLeases(
      absl::Span<const Fence> fences, absl::Duration ttl, MonoTime deadline);
  // Frees the lease. OK if it was already released with this token;
  // FailedPrecondition if a newer token was granted.
  virtual absl::Status ReleaseLease(const Fence& fence, MonoTime deadline) = 0;
  virtual absl::StatusOr<std::vector<LeaseInfo>> ListLeases(
      MonoTime deadline) = 0;

  // --- Jobs. Not fenced: the API writes them. ---

  // Creates or replaces each job, in one transaction. A write whose
  // expected_revision is not kAnyRevision must match: kNoRevision = the job
  // does not exist (or is deleted), otherwise its current revision; a mismatch
  // is Aborted (JobWrite::create_only: the job must not exist, whatever its
  // spec). Each changed job gets the next store revision; a changed
  // trigger, start or end bumps its generation. A spec equal to the stored one
  // changes nothing (whatever expected_revision says, unless create_only).
  // The stored watermark and
  // its watermark_generation are kept as they are, also across a generation
  // bump -- unless the write gives a watermark (JobWrite::watermark) and
  // creates the job or bumps its generation. Returns the records in force, in
  // the order of `writes`.
  virtual absl::StatusOr<std::vector<JobRecord>> PutJobs(
      absl::Span<const JobWrite> writes, MonoTime deadline) = 0;
  // Deletes a job, leaving a tombstone that keeps its id and generation (a job
  // put again later continues both). Its runs, claims and watermark stay.
  // NotFound if the key was never stored; OK, writing nothing, if the job is
  // already deleted (a re-send); Aborted if a live job's revision is not
  // expected_revision (unless kAnyRevision).
  virtual absl::Status DeleteJob(const JobKey& key, int64_t expected_revision,
                                 MonoTime deadline) = 0;
  // NotFound if the job does not exist or is deleted.
  virtual absl::StatusOr<JobRecord> GetJob(const JobKey& key,
                                           MonoTime deadline) = 0;
  // Up to `limit` (>= 1) live jobs with ids above `after`, ascending. Start
  // with after = 0; continue with the page's next_after until done. Pages are
  // not one snapshot: follow with JobChangesSince(first page's revision) to
  // see every change made meanwhile (some may be seen twice).
  virtual absl::StatusOr<JobPage> LoadJobs(JobId after, int limit,
                                           MonoTime deadline) = 0;
  // The change feed: up to `limit` jobs whose last change is after
  // `revision`, by ascending revision, tombstones included. A job changed
  // twice appears once, in its latest state.
  virtual absl::StatusOr<JobChanges> JobChangesSince(int64_t revision,
                                                     int limit,
                                                     MonoTime deadline) = 0;

  // --- Fires ---

  // One scheduler step's decisions, in one transaction, if `fence` is current:
  //   - each claim creates its fire keyed by FireRef, with a new run in state
  //     pending (created_at = batch.at, token = fence.token). AlreadyExists if
  //     the fire was claimed by another run, or the RunId was used for
  //     another fire; the same claim again is OK;
  //   - each missed record is stored once (keyed by job, generation, first,
  //     reason);
  //   - each watermark advance applies, in order, to its job's stored
  //     (watermark_generation, watermark) pair: a newer generation replaces
  //     it (even with an earlier time), the same generation moves forward
  //     only, an older generation is ignored (WatermarkAdvance has the rule).
  // NotFound if a job id is unknown; InvalidArgument if a watermark's
  // generation is below 1 or above its job's current generation. On any error
  // nothing is written.
  virtual absl::Status ClaimFires(const Fence& fence, const ClaimBatch& batch,
                                  MonoTime deadline) = 0;
  // For each fire, the run that claimed it (run == 0 if none).
  virtual absl::StatusOr<std::vector<ClaimInfo>> LookupClaims(
      absl::Span<const FireRef> fires, MonoTime deadline) = 0;
  // Up to `limit` of a job's missed records, by first, reason, generation,
  // starting after `after` (the previous page's `next`; nullopt: from the
  // start).
  virtual absl::StatusOr<MissedPage> ListMissed(
      JobId job, const std::optional<MissedCursor>& after, int limit,
      MonoTime deadline) = 0;

  // --- Runs ---

  // Applies the transitions in order, in one transaction, if `fence` is
  // current. Each is a compare-and-set on the run's state: Aborted if the
  // state is not `from` (unless the same transition is already in the run's
  // history: OK, a re-send); NotFound for an unknown run. A transition to
  // running opens attempt `attempt`; one from running closes it with
  // exit_code, detail and output (kept bounded, newest bytes).
  virtual absl::Status TransitionRuns(const Fence& fence,
                                      absl::Span<const RunTransition> batch,
                                      MonoTime deadline) = 0;
  // NotFound if the run does not exist (or was deleted by retention).
  virtual absl::StatusOr<RunDetail> GetRun(RunId run, MonoTime deadline) = 0;
  // A page of runs matching `query`, newest scheduled time first.
  virtual absl::StatusOr<RunPage> ListRuns(const RunQuery& query,
                                           MonoTime deadline) = 0;
  // Deletes finished runs (succeeded, failed, cancelled) beyond the policy --
  // older than max_age, beyond the newest keep_per_job of their job, then the
  // oldest until the total run bytes fit max_total_bytes -- with their claims
  // and history; missed records whose last fire is older than max_age; and
  // idempotency keys expired at `now`. Unfinished runs are never deleted.
  // A deleted run's fire is no longer protected against a second claim; the
  // job's watermark is what keeps a scheduler from deciding it again.
  virtual absl::StatusOr<RetentionResult> ApplyRetention(
      const RetentionPolicy& policy, absl::Time now, MonoTime deadline) = 0;

  // --- Idempotency keys ---

  // Stores `record` unless its key is held by an unexpired record (expires_at
  // > record.created_at); answers which record is in force. The caller
  // compares fingerprints: a different one is a key reused for another
  // request.
  virtual absl::StatusOr<IdempotencyOutcome> CheckIdempotencyKey(
      const IdempotencyRecord& record, MonoTime deadline) = 0;

  virtual absl::StatusOr<StoreInfo> GetInfo(MonoTime deadline) = 0;

  // Reserves `count` (>= 1) RunIds for the caller's claims: returns the first
  // of [first, first + count), above every RunId claimed or reserved before
  // (GetInfo().max_run_id counts the reservation from now on). Schedulers
  // that share a store each claim under RunIds of their own reservations;
  // an unused reservation is simply skipped. Not idempotent: a re-send after
  // an indeterminate answer reserves again (the first reservation is lost,
  // which is harmless). InvalidArgument if count < 1.
  virtual absl::StatusOr<RunId> ReserveRunIds(int64_t count,
                                              MonoTime deadline) = 0;

  // A hint for a process following JobChangesSince that jobs may have
  // changed: `changed` is called, on a thread of the store's, soon after job
  // writes commit (other processes' and this one's), and once whenever the
  // hints may have had a gap (a reconnection), until the returned handle is
  // destroyed. Hints can be late or lost: poll as well. Null (the default):
  // this store gives none.
  class JobWatch {
   public:
    virtual ~JobWatch() = default;
  };
  virtual std::unique_ptr<JobWatch> WatchJobs(std::function<void()> changed) {
    (void)changed;
    return nullptr;
  }

  // --- Conveniences over the batch methods. ---
  absl::StatusOr<JobRecord> PutJob(const JobSpec& spec,
                                   int64_t expected_revision,
                                   MonoTime deadline);
  // Records missed fires (no claims) under `fence`.
  absl::Status RecordMissed(const Fence& fence,
                            std::vector<MissedRecord> records,
                            MonoTime deadline);
  absl::Status TransitionRun(const Fence& fence, const RunTransition& t,
                             MonoTime deadline);
};

}  // namespace chime

#endif  // CHIME_INCLUDE_CHIME_STORE_H_
