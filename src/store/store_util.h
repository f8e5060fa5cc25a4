// Helpers shared by the Store implementations: the rules every backend must
// apply the same way (what a schedule change is, how run bytes are counted,
// how output is bounded, how requests are checked) and their error messages,
// so that the conformance suite can hold every backend to one behaviour.
//
// Thread-safety: pure functions.
#ifndef CHIME_SRC_STORE_STORE_UTIL_H_
#define CHIME_SRC_STORE_STORE_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "chime/clock.h"
#include "chime/job.h"
#include "chime/store_types.h"
#include "src/time/nanos.h"

namespace chime::store {

// Run bytes, as RetentionPolicy::max_total_bytes counts them: a fixed cost per
// run and per transition, plus the text kept (details and output).
inline constexpr int64_t kRunBaseBytes = 256;
inline constexpr int64_t kTransitionBaseBytes = 64;
int64_t TransitionBytes(const RunTransition& t, size_t kept_output_bytes);

// RunIds are SQL integers in some backends: every store refuses larger ones.
inline constexpr RunId kMaxRunId = (RunId{1} << 63) - 1;

// A trigger, start or end change: the job's generation is bumped.
bool ScheduleChanged(const JobSpec& before, const JobSpec& after);

// Keeps the last `max_bytes` of `output`; true if anything was dropped.
bool TruncateOutput(std::string* output, size_t max_bytes);

// "default/nightly" is "nightly"; others "ns/id".
std::string JobKeyString(const JobKey& key);
// "job 7 generation 3 at 2026-01-01T00:00:00Z" (" manual").
std::string FireRefString(const FireRef& fire);

// Wall times as int64 nanoseconds (src/time/nanos.h).
using time::DurationToNanos;
using time::NanosToDuration;
using time::NanosToTime;
using time::TimeToNanos;

// DeadlineExceeded (nothing done) once the deadline has passed.
absl::Status CheckDeadline(const Clock& clock, MonoTime deadline);

// InvalidArgument, naming the field, for requests no store should accept.
absl::Status ValidateLeaseRequest(absl::string_view name,
                                  absl::string_view holder, absl::Duration ttl);
absl::Status ValidateJobWrites(absl::Span<const JobWrite> writes);
absl::Status ValidateClaimBatch(const ClaimBatch& batch);
absl::Status ValidateTransitions(absl::Span<const RunTransition> batch);
absl::Status ValidateLimit(int limit);
// ReserveRunIds: 1 <= count <= 2^40 (RunIds stay far from overflowing).
absl::Status ValidateRunIdCount(int64_t count);
absl::Status ValidateIdempotencyRecord(const IdempotencyRecord& record);

// What a put does to the job it names. `existing` is null if the key was never
// stored (a tombstone is passed, with deleted set). Aborted on a revision
// mismatch.
struct JobPutPlan {
  bool write = false;      // false: the stored spec is already this one
  int64_t generation = 0;  // of the record after the put
  // The write's watermark becomes the job's, for `generation`
  // (JobWrite::watermark).
  bool start_watermark = false;
};
absl::StatusOr<JobPutPlan> PlanJobPut(const JobRecord* existing,
                                      const JobWrite& write);
// Makes `job` (the existing record, or a new one) the record after `write`,
// as `plan` (plan.write true) says: its spec, generation, not deleted, and
// the write's watermark when the plan starts one. Ids and revisions are the
// store's to set.
void ApplyJobPut(const JobPutPlan& plan, const JobWrite& write, JobRecord* job);

// What a delete does to the job it names (`existing` null if the key was
// never stored): true = write the tombstone; false = already deleted (a
// re-send: OK, nothing to write). NotFound for a key never stored; Aborted if
// a live job's revision is not `expected_revision` (unless kAnyRevision).
absl::StatusOr<bool> PlanJobDelete(const JobRecord* existing, const JobKey& key,
                                   int64_t expected_revision);

// The watermark rule (WatermarkAdvance): InvalidArgument, naming item
// watermarks[index], the job and both generations, if `advance` is for a
// generation above the job's current `job_generation`.
absl::Status CheckWatermarkAdvance(size_t index,
                                   const WatermarkAdvance& advance,
                                   int64_t job_generation);
// Applies `advance` (checked) to a job's stored pair: a newer generation
// replaces it, the same one moves forward only, an older one is ignored.
// Returns whether the pair changed.
bool AdvanceWatermark(const WatermarkAdvance& advance,
                      int64_t* watermark_generation, absl::Time* watermark);

// Whether a transition applies to a run in state `current`: false = a re-send,
// already in the run's history (same from, to, attempt: `in_history`); true =
// apply (current == t.from); Aborted otherwise. A run's history never holds
// the same (from, to, attempt) twice: attempt numbers only grow.
absl::StatusOr<bool> CheckTransition(RunState current, const RunTransition& t,
                                     bool in_history);

// The messages of the common refusals.
absl::Status FencedError(const Fence& fence, int64_t current_token);
absl::Status ClaimConflictError(const FireRef& fire, RunId claimed_by,
                                RunId asked);
absl::Status RunIdReusedError(RunId run, const FireRef& claimed,
                              const FireRef& asked);
absl::Status TransitionConflictError(const RunTransition& t, RunState current);
absl::Status JobNotFoundError(const JobKey& key);
absl::Status UnknownJobIdError(JobId job);
absl::Status RunNotFoundError(RunId run);

}  // namespace chime::store

#endif  // CHIME_SRC_STORE_STORE_UTIL_H_
