// The parts of the public Store API that are code: enum names and the
// single-item conveniences over the batch methods.
#include "chime/store.h"

#include <utility>

namespace chime {

absl::string_view RunStateName(RunState s) {
  switch (s) {
    case RunState::kClaiming:
      return "claiming";
    case RunState::kPending:
      return "pending";
    case RunState::kRunning:
      return "running";
    case RunState::kRetrying:
      return "retrying";
    case RunState::kSucceeded:
      return "succeeded";
    case RunState::kFailed:
      return "failed";
    case RunState::kCancelled:
      return "cancelled";
    case RunState::kLost:
      return "lost";
  }
  return "unknown";
}

bool IsFinal(RunState s) {
  return s == RunState::kSucceeded || s == RunState::kFailed ||
         s == RunState::kCancelled;
}

absl::string_view MissReasonName(MissReason r) {
  switch (r) {
    case MissReason::kMisfireSkip:
      return "misfire_skip";
    case MissReason::kMisfireRunOnce:
      return "misfire_run_once";
    case MissReason::kMisfireMaxCatchup:
      return "misfire_max_catchup";
    case MissReason::kCatchupWindow:
      return "catchup_window";
    case MissReason::kPaused:
      return "paused";
    case MissReason::kOverlap:
      return "overlap";
    case MissReason::kBufferFull:
      return "buffer_full";
    case MissReason::kReplaced:
      return "replaced";
    case MissReason::kJobRemoved:
      return "job_removed";
    case MissReason::kFenced:
      return "fenced";
  }
  return "unknown";
}

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

absl::Status Store::TransitionRun(const Fence& fence, const RunTransition& t,
                                  MonoTime deadline) {
  return TransitionRuns(fence, absl::MakeConstSpan(&t, 1), deadline);
}

}  // namespace chime
