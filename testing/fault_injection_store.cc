#include "testing/fault_injection_store.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace chime::testing {
namespace {

// Arming a fault with OK would make a "failure" that succeeds: a test bug.
void RequireError(const absl::Status& status) {
  if (!status.ok()) return;
  std::fprintf(stderr, "FaultInjectionStore: a fault needs a non-OK status\n");
  std::abort();
}

}  // namespace

void FaultInjectionStore::FailNextWrites(int n, absl::Status status) {
  RequireError(status);
  absl::MutexLock lock(&mu_);
  fail_writes_ = n;
  fail_writes_status_ = std::move(status);
}

void FaultInjectionStore::FailNextReads(int n, absl::Status status) {
  RequireError(status);
  absl::MutexLock lock(&mu_);
  fail_reads_ = n;
  fail_reads_status_ = std::move(status);
}

void FaultInjectionStore::MakeNextWritesIndeterminate(int n,
                                                      absl::Status status) {
  RequireError(status);
  absl::MutexLock lock(&mu_);
  indeterminate_ = n;
  indeterminate_status_ = std::move(status);
}

void FaultInjectionStore::SetDelay(absl::Duration delay, Clock* clock) {
  absl::MutexLock lock(&mu_);
  delay_ = delay;
  delay_clock_ = clock;
}

void FaultInjectionStore::Reset() {
  absl::MutexLock lock(&mu_);
  fail_writes_ = fail_reads_ = indeterminate_ = 0;
  delay_ = absl::ZeroDuration();
  delay_clock_ = nullptr;
}

void FaultInjectionStore::Crash() {
  absl::MutexLock lock(&mu_);
  crashed_ = true;
  ++crashes_;
}

void FaultInjectionStore::Restart() {
  absl::MutexLock lock(&mu_);
  crashed_ = false;
}

FaultInjectionStore::Counters FaultInjectionStore::counters() const {
  absl::MutexLock lock(&mu_);
  return counters_;
}

FaultInjectionStore::Fault FaultInjectionStore::Begin(bool write,
                                                      absl::Status* injected) {
  absl::Duration delay;
  Clock* clock;
  int64_t crashes;
  {
    absl::MutexLock lock(&mu_);
    delay = delay_;
    clock = delay_clock_;
    crashes = crashes_;
  }
  if (clock != nullptr && delay > absl::ZeroDuration()) clock->SleepFor(delay);
  absl::MutexLock lock(&mu_);
  if (crashed_ || crashes_ != crashes) {
    ++(write ? counters_.failed_writes : counters_.failed_reads);
    *injected = absl::UnavailableError(
        crashes_ != crashes
            ? "injected: the store crashed before this call committed"
            : "injected: the store is down (crashed)");
    return Fault::kFail;
  }
  if (!write) {
    ++counters_.reads;
    if (fail_reads_ == 0) return Fault::kNone;
    --fail_reads_;
    ++counters_.failed_reads;
    *injected = fail_reads_status_;
    return Fault::kFail;
  }
  ++counters_.writes;
  if (fail_writes_ > 0) {
    --fail_writes_;
    ++counters_.failed_writes;
    *injected = fail_writes_status_;
    return Fault::kFail;
  }
  if (indeterminate_ > 0) {
    --indeterminate_;
    ++counters_.indeterminate_writes;
    *injected = indeterminate_status_;
    return Fault::kIndeterminate;
  }
  return Fault::kNone;
}

template <typename R>
R FaultInjectionStore::Call(bool write, absl::FunctionRef<R()> call) {
  absl::Status injected;
  switch (Begin(write, &injected)) {
    case Fault::kFail:
      return injected;
    case Fault::kIndeterminate:
      // Applied (or refused) by the base; the caller cannot tell which.
      static_cast<void>(call());
      return injected;
    case Fault::kNone:
      break;
  }
  return call();
}

absl::StatusOr<LeaseGrant> FaultInjectionStore::AcquireLease(
    absl::string_view name, absl::string_view holder, absl::Duration ttl,
    MonoTime deadline) {
  return Call<absl::StatusOr<LeaseGrant>>(
      true, [&] { return base_.AcquireLease(name, holder, ttl, deadline); });
}

absl::StatusOr<LeaseGrant> FaultInjectionStore::RenewLease(const Fence& fence,
                                                           absl::Duration ttl,
                                                           MonoTime deadline) {
  return Call<absl::StatusOr<LeaseGrant>>(
      true, [&] { return base_.RenewLease(fence, ttl, deadline); });
}

absl::Status FaultInjectionStore::ReleaseLease(const Fence& fence,
                                               MonoTime deadline) {
  return Call<absl::Status>(
      true, [&] { return base_.ReleaseLease(fence, deadline); });
}

absl::StatusOr<std::vector<LeaseInfo>> FaultInjectionStore::ListLeases(
    MonoTime deadline) {
  return Call<absl::StatusOr<std::vector<LeaseInfo>>>(
      false, [&] { return base_.ListLeases(deadline); });
}

absl::StatusOr<std::vector<JobRecord>> FaultInjectionStore::PutJobs(
    absl::Span<const JobWrite> writes, MonoTime deadline) {
  return Call<absl::StatusOr<std::vector<JobRecord>>>(
      true, [&] { return base_.PutJobs(writes, deadline); });
}

absl::Status FaultInjectionStore::DeleteJob(const JobKey& key,
                                            int64_t expected_revision,
                                            MonoTime deadline) {
  return Call<absl::Status>(
      true, [&] { return base_.DeleteJob(key, expected_revision, deadline); });
}

absl::StatusOr<JobRecord> FaultInjectionStore::GetJob(const JobKey& key,
                                                      MonoTime deadline) {
  return Call<absl::StatusOr<JobRecord>>(
      false, [&] { return base_.GetJob(key, deadline); });
}

absl::StatusOr<JobPage> FaultInjectionStore::LoadJobs(JobId after, int limit,
                                                      MonoTime deadline) {
  return Call<absl::StatusOr<JobPage>>(
      false, [&] { return base_.LoadJobs(after, limit, deadline); });
}

absl::StatusOr<JobChanges> FaultInjectionStore::JobChangesSince(
    int64_t revision, int limit, MonoTime deadline) {
  return Call<absl::StatusOr<JobChanges>>(
      false, [&] { return base_.JobChangesSince(revision, limit, deadline); });
}

absl::Status FaultInjectionStore::ClaimFires(const Fence& fence,
                                             const ClaimBatch& batch,
                                             MonoTime deadline) {
  return Call<absl::Status>(
      true, [&] { return base_.ClaimFires(fence, batch, deadline); });
}

absl::StatusOr<std::vector<ClaimInfo>> FaultInjectionStore::LookupClaims(
    absl::Span<const FireRef> fires, MonoTime deadline) {
  return Call<absl::StatusOr<std::vector<ClaimInfo>>>(
      false, [&] { return base_.LookupClaims(fires, deadline); });
}

absl::StatusOr<MissedPage> FaultInjectionStore::ListMissed(
    JobId job, const std::optional<MissedCursor>& after, int limit,
    MonoTime deadline) {
  return Call<absl::StatusOr<MissedPage>>(
      false, [&] { return base_.ListMissed(job, after, limit, deadline); });
}

absl::Status FaultInjectionStore::TransitionRuns(
    const Fence& fence, absl::Span<const RunTransition> batch,
    MonoTime deadline) {
  return Call<absl::Status>(
      true, [&] { return base_.TransitionRuns(fence, batch, deadline); });
}

absl::StatusOr<RunDetail> FaultInjectionStore::GetRun(RunId run,
                                                      MonoTime deadline) {
  return Call<absl::StatusOr<RunDetail>>(
      false, [&] { return base_.GetRun(run, deadline); });
}

absl::StatusOr<RunPage> FaultInjectionStore::ListRuns(const RunQuery& query,
                                                      MonoTime deadline) {
  return Call<absl::StatusOr<RunPage>>(
      false, [&] { return base_.ListRuns(query, deadline); });
}

absl::StatusOr<RetentionResult> FaultInjectionStore::ApplyRetention(
    const RetentionPolicy& policy, absl::Time now, MonoTime deadline) {
  return Call<absl::StatusOr<RetentionResult>>(
      true, [&] { return base_.ApplyRetention(policy, now, deadline); });
}

absl::StatusOr<IdempotencyOutcome> FaultInjectionStore::CheckIdempotencyKey(
    const IdempotencyRecord& record, MonoTime deadline) {
  return Call<absl::StatusOr<IdempotencyOutcome>>(
      true, [&] { return base_.CheckIdempotencyKey(record, deadline); });
}

absl::StatusOr<StoreInfo> FaultInjectionStore::GetInfo(MonoTime deadline) {
  return Call<absl::StatusOr<StoreInfo>>(
      false, [&] { return base_.GetInfo(deadline); });
}

absl::StatusOr<RunId> FaultInjectionStore::ReserveRunIds(int64_t count,
                                                         MonoTime deadline) {
  return Call<absl::StatusOr<RunId>>(
      true, [&] { return base_.ReserveRunIds(count, deadline); });
}

}  // namespace chime::testing
