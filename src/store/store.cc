// The parts of the public Store API that are code: enum names and the
// single-item conveniences over the batch methods.
#include "chime/store.h"

#include <utility>

namespace chime {

absl::StatusOr<JobRecord> Store::PutJob(const JobSpec& spec,
                                        int64_t expected_revision,
                                        MonoTime deadline) {
  JobWrite write{spec, expected_revision};
  absl::StatusOr<std::vector<JobRecord>> records =
      PutJobs(absl::MakeConstSpan(&write, 1), deadline);
  if (!records.ok()) return records.status();
  return std::move(records->front());
}

absl::Status Store::RecordMissed(const Fence& fence,
                                 std::vector<MissedRecord> records,
                                 MonoTime deadline) {
  ClaimBatch batch;
  batch.missed = std::move(records);
  return ClaimFires(fence, batch, deadline);
}

absl::StatusOr<std::vector<absl::StatusOr<LeaseGrant>>> Store::RenewLeases(
    absl::Span<const Fence> fences, absl::Duration ttl, MonoTime deadline) {
  std::vector<absl::StatusOr<LeaseGrant>> grants;
  grants.reserve(fences.size());
  for (const Fence& fence : fences) {
    absl::StatusOr<LeaseGrant> grant = RenewLease(fence, ttl, deadline);
    // Unavailable stands for the whole call: nothing is known of the rest.
    if (!grant.ok() && !absl::IsFailedPrecondition(grant.status()) &&
        !absl::IsInvalidArgument(grant.status())) {
      return grant.status();
    }
    grants.push_back(std::move(grant));
  }
  return grants;
}

absl::Status Store::TransitionRun(const Fence& fence, const RunTransition& t,
                                  MonoTime deadline) {
  return TransitionRuns(fence, absl::MakeConstSpan(&t, 1), deadline);
}

}  // namespace chime
