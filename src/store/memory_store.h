// MemoryStore: the reference implementation of chime::Store, in memory.
//
// It is the plainest possible reading of the contract in chime/store.h: one
// mutex, maps, every call one critical section. The conformance suite
// (tests/store_conformance/) is written against it first; every other backend
// must answer the same. Nothing survives the process, so "durable before
// acknowledged" holds only for the process's lifetime: use it for tests and
// for a scheduler that needs no memory across restarts.
//
// Leases expire on the monotonic clock of `Options::clock`; tokens come from
// one counter starting at 1.
//
// Costs: claims and transitions are O(1) hash-map work per item; ListRuns and
// ApplyRetention scan every run (fine for a reference, not for millions).
//
// Thread-safety: every method may be called from any thread.
#ifndef CHIME_SRC_STORE_MEMORY_STORE_H_
#define CHIME_SRC_STORE_MEMORY_STORE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "chime/clock.h"
#include "chime/store.h"

namespace chime::store {

class MemoryStore final : public Store {
 public:
  struct Options {
    Clock* clock = nullptr;  // null: RealClock::Get()
    // Each attempt keeps at most this many bytes of output (the newest).
    size_t max_output_bytes = 64 * 1024;
    // Memory bounds for a store nobody applies retention to (0: none). Beyond
    // max_finished_runs finished runs (succeeded, failed, cancelled), the
    // oldest to finish is deleted as ApplyRetention would (with its claim:
    // the job's watermark keeps the fire from being decided again); beyond
    // max_missed_records missed records, the oldest written is.
    size_t max_finished_runs = 0;
    size_t max_missed_records = 0;
  };

  MemoryStore() : MemoryStore(Options{}) {}
  explicit MemoryStore(Options options);

  absl::StatusOr<LeaseGrant> AcquireLease(absl::string_view name,
                                          absl::string_view holder,
                                          absl::Duration ttl,
                                          MonoTime deadline) override;
  absl::StatusOr<LeaseGrant> RenewLease(const Fence& fence, absl::Duration ttl,
                                        MonoTime deadline) override;
  absl::Status ReleaseLease(const Fence& fence, MonoTime deadline) override;
  absl::StatusOr<std::vector<LeaseInfo>> ListLeases(MonoTime deadline) override;

  absl::StatusOr<std::vector<JobRecord>> PutJobs(
      absl::Span<const JobWrite> writes, MonoTime deadline) override;
  absl::Status DeleteJob(const JobKey& key, int64_t expected_revision,
                         MonoTime deadline) override;
  absl::StatusOr<JobRecord> GetJob(const JobKey& key,
                                   MonoTime deadline) override;
  absl::StatusOr<JobPage> LoadJobs(JobId after, int limit,
                                   MonoTime deadline) override;
  absl::StatusOr<JobChanges> JobChangesSince(int64_t revision, int limit,
                                             MonoTime deadline) override;

  absl::Status ClaimFires(const Fence& fence, const ClaimBatch& batch,
                          MonoTime deadline) override;
  absl::StatusOr<std::vector<ClaimInfo>> LookupClaims(
      absl::Span<const FireRef> fires, MonoTime deadline) override;
  absl::StatusOr<MissedPage> ListMissed(
      JobId job, const std::optional<MissedCursor>& after, int limit,
      MonoTime deadline) override;

  absl::Status TransitionRuns(const Fence& fence,
                              absl::Span<const RunTransition> batch,
                              MonoTime deadline) override;
  absl::StatusOr<RunDetail> GetRun(RunId run, MonoTime deadline) override;
  absl::StatusOr<RunPage> ListRuns(const RunQuery& query,
                                   MonoTime deadline) override;
  absl::StatusOr<RetentionResult> ApplyRetention(const RetentionPolicy& policy,
                                                 absl::Time now,
                                                 MonoTime deadline) override;

  absl::StatusOr<IdempotencyOutcome> CheckIdempotencyKey(
      const IdempotencyRecord& record, MonoTime deadline) override;
  absl::StatusOr<StoreInfo> GetInfo(MonoTime deadline) override;
  absl::StatusOr<RunId> ReserveRunIds(int64_t count,
                                      MonoTime deadline) override;

 private:
  struct Lease {
    std::string holder;  // empty once released
    int64_t token = 0;
    MonoTime expires;
  };
  struct Run {
    RunDetail detail;
    int64_t bytes = 0;
  };
  // Missed records of a job, ordered as ListMissed pages them.
  using MissedKey = std::tuple<JobId, absl::Time, MissReason, int64_t>;

  absl::Status CheckFenceLocked(const Fence& fence) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void TouchJobLocked(JobRecord& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DeleteRunLocked(RunId id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock& clock_;
  const Options options_;

  mutable absl::Mutex mu_;
  int64_t last_token_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, Lease, std::less<>> leases_ ABSL_GUARDED_BY(mu_);
  int64_t revision_ ABSL_GUARDED_BY(mu_) = 0;
  JobId last_job_id_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<JobKey, JobId> job_ids_ ABSL_GUARDED_BY(mu_);
  std::map<JobId, JobRecord> jobs_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, JobId> changes_ ABSL_GUARDED_BY(mu_);  // by revision
  absl::flat_hash_map<FireRef, RunId> fires_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<RunId, Run> runs_ ABSL_GUARDED_BY(mu_);
  std::map<MissedKey, MissedRecord> missed_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, IdempotencyRecord> idempotency_
      ABSL_GUARDED_BY(mu_);
  RunId max_run_id_ ABSL_GUARDED_BY(mu_) = 0;
  // For the Options bounds: runs in the order they finished, missed records
  // in the order they were written.
  std::deque<RunId> finished_ ABSL_GUARDED_BY(mu_);
  std::deque<MissedKey> missed_order_ ABSL_GUARDED_BY(mu_);
  int64_t run_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace chime::store

#endif  // CHIME_SRC_STORE_MEMORY_STORE_H_
