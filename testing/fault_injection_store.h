// FaultInjectionStore: wraps any chime::Store and makes it fail on demand, so
// that tests can drive the degraded paths a real disk or network produces:
//
//   FaultInjectionStore store(base);
//   store.FailNextWrites(1);               // Unavailable, nothing applied
//   store.MakeNextWritesIndeterminate(1);  // applied, reported
//   DeadlineExceeded store.FailNextReads(2, absl::UnavailableError("disk"));
//   store.SetDelay(absl::Seconds(2), &simulated_clock);  // every call waits
//   store.Crash();    // calls not yet committed are dropped; all calls fail
//   store.Restart();  // the base, with what was committed, answers again
//
// Writes are the methods that change the store (leases, PutJobs, DeleteJob,
// ClaimFires, TransitionRuns, ApplyRetention, CheckIdempotencyKey); reads are
// the rest. A failed write never reaches the base store. An indeterminate
// write is passed to the base store -- whatever the base answered, the caller
// gets the injected status -- which is what a lost reply or a timeout after
// commit looks like; the caller must resolve it by reading back. With nothing
// armed the wrapper is transparent (it passes the conformance suite).
//
// Delays sleep on the given clock: with a SimulatedClock a test moves time to
// let the call through (SimulatedClock::BlockUntilWaiters, then AdvanceBy).
//
// Thread-safety: every method may be called from any thread.
#ifndef CHIME_TESTING_FAULT_INJECTION_STORE_H_
#define CHIME_TESTING_FAULT_INJECTION_STORE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "chime/clock.h"
#include "chime/store.h"

namespace chime::testing {

class FaultInjectionStore final : public Store {
 public:
  // Wraps `base`, which must outlive this store.
  explicit FaultInjectionStore(Store& base) : base_(base) {}
  // Wraps and owns `base`.
  explicit FaultInjectionStore(std::unique_ptr<Store> base)
      : owned_(std::move(base)), base_(*owned_) {}

  // The next `n` writes fail with `status` (not OK) and change nothing.
  void FailNextWrites(int n, absl::Status status = absl::UnavailableError(
                                 "injected: write not applied"));
  // The next `n` reads fail with `status` (not OK).
  void FailNextReads(int n, absl::Status status = absl::UnavailableError(
                                "injected: read failed"));
  // The next `n` writes reach the base store, then report `status` (not OK).
  void MakeNextWritesIndeterminate(
      int n,
      absl::Status status = absl::DeadlineExceededError(
          "injected: outcome unknown (the write may have been applied)"));
  // Every call first sleeps `delay` on `clock`; zero turns delays off.
  void SetDelay(absl::Duration delay, Clock* clock);
  // Disarms every fault and delay (not a crash: see Restart).
  void Reset();
  // A simulated crash of the store's process: every call still on its way
  // (sleeping its delay, so not yet committed) is dropped and answers
  // Unavailable without reaching the base store, and so does every later
  // call until Restart. The base keeps exactly what was committed before.
  void Crash();
  void Restart();

  struct Counters {
    int64_t reads = 0;
    int64_t writes = 0;
    int64_t failed_reads = 0;
    int64_t failed_writes = 0;
    int64_t indeterminate_writes = 0;
  };
  Counters counters() const;

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
  enum class Fault { kNone, kFail, kIndeterminate };
  // Sleeps the delay, counts the call and consumes the armed fault, if any.
  Fault Begin(bool write, absl::Status* injected);
  template <typename R>
  R Call(bool write, absl::FunctionRef<R()> call);

  std::unique_ptr<Store> owned_;
  Store& base_;
  mutable absl::Mutex mu_;
  int fail_writes_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status fail_writes_status_ ABSL_GUARDED_BY(mu_);
  int fail_reads_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status fail_reads_status_ ABSL_GUARDED_BY(mu_);
  int indeterminate_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status indeterminate_status_ ABSL_GUARDED_BY(mu_);
  absl::Duration delay_ ABSL_GUARDED_BY(mu_);
  Clock* delay_clock_ ABSL_GUARDED_BY(mu_) = nullptr;
  Counters counters_ ABSL_GUARDED_BY(mu_);
  bool crashed_ ABSL_GUARDED_BY(mu_) = false;
  int64_t crashes_ ABSL_GUARDED_BY(mu_) = 0;  // calls remember the count
};

}  // namespace chime::testing

#endif  // CHIME_TESTING_FAULT_INJECTION_STORE_H_
