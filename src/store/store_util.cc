#include "src/store/store_util.h"

#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "src/time/rfc3339.h"

namespace chime::store {
namespace {

absl::Status Invalid(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

}  // namespace

int64_t TransitionBytes(const RunTransition& t, size_t kept_output_bytes) {
  return kTransitionBaseBytes + static_cast<int64_t>(t.detail.size()) +
         static_cast<int64_t>(kept_output_bytes);
}

bool ScheduleChanged(const JobSpec& before, const JobSpec& after) {
  return before.trigger != after.trigger || before.start != after.start ||
         before.end != after.end;
}

bool TruncateOutput(std::string* output, size_t max_bytes) {
  if (output->size() <= max_bytes) return false;
  output->erase(0, output->size() - max_bytes);
  return true;
}

std::string JobKeyString(const JobKey& key) {
  return key.name_space == "default"
             ? key.id
             : absl::StrCat(key.name_space, "/", key.id);
}

std::string FireRefString(const FireRef& fire) {
  std::string out =
      absl::StrCat("job ", fire.job, " generation ", fire.generation, " at ");
  time::AppendUtc(fire.scheduled_time, &out);
  if (fire.manual) out += " (manual)";
  return out;
}

absl::Status CheckDeadline(const Clock& clock, MonoTime deadline) {
  if (clock.MonoNow() < deadline) return absl::OkStatus();
  return absl::DeadlineExceededError(
      "deadline passed before the store operation started; nothing was done");
}

absl::Status ValidateLeaseRequest(absl::string_view name,
                                  absl::string_view holder,
                                  absl::Duration ttl) {
  if (name.empty()) return Invalid("lease name", "is empty");
  if (holder.empty()) return Invalid("lease holder", "is empty");
  if (ttl <= absl::ZeroDuration() || ttl == absl::InfiniteDuration()) {
    return Invalid("lease ttl", absl::StrCat(absl::FormatDuration(ttl),
                                             " is not a positive duration"));
  }
  return absl::OkStatus();
}

absl::Status ValidateJobWrites(absl::Span<const JobWrite> writes) {
  absl::flat_hash_map<JobKey, size_t> seen;
  seen.reserve(writes.size());
  for (size_t i = 0; i < writes.size(); ++i) {
    const JobWrite& w = writes[i];
    if (w.spec.key.id.empty() || w.spec.key.name_space.empty()) {
      return Invalid(absl::StrCat("writes[", i, "].spec.key"),
                     "namespace and id must be non-empty");
    }
    if (w.expected_revision < kAnyRevision) {
      return Invalid(absl::StrCat("writes[", i, "].expected_revision"),
                     absl::StrCat(w.expected_revision, " is below -1"));
    }
    if (auto [it, fresh] = seen.try_emplace(w.spec.key, i); !fresh) {
      return Invalid(absl::StrCat("writes[", i, "].spec.key"),
                     absl::StrCat("\"", JobKeyString(w.spec.key),
                                  "\" is also writes[", it->second, "]"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateClaimBatch(const ClaimBatch& batch) {
  for (size_t i = 0; i < batch.claims.size(); ++i) {
    if (batch.claims[i].run == 0 || batch.claims[i].run > kMaxRunId) {
      return Invalid(
          absl::StrCat("claims[", i, "].run"),
          absl::StrCat(batch.claims[i].run, " is outside 1..2^63-1"));
    }
    if (batch.claims[i].fire.job <= 0) {
      return Invalid(absl::StrCat("claims[", i, "].fire.job"), "is not an id");
    }
  }
  for (size_t i = 0; i < batch.missed.size(); ++i) {
    const MissedRecord& m = batch.missed[i];
    if (m.last < m.first || m.count < 1) {
      return Invalid(absl::StrCat("missed[", i, "]"),
                     "needs first <= last and count >= 1");
    }
  }
  for (size_t i = 0; i < batch.watermarks.size(); ++i) {
    // 0 is no generation: most likely a caller that forgot to say which.
    if (batch.watermarks[i].generation < 1) {
      return Invalid(absl::StrCat("watermarks[", i, "].generation"),
                     absl::StrCat(batch.watermarks[i].generation,
                                  " is below 1 (the first generation)"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckWatermarkAdvance(size_t index,
                                   const WatermarkAdvance& advance,
                                   int64_t job_generation) {
  if (advance.generation <= job_generation) return absl::OkStatus();
  return Invalid(
      absl::StrCat("watermarks[", index, "].generation"),
      absl::StrCat("generation ", advance.generation, " of job id ",
                   advance.job, " is above the job's current generation ",
                   job_generation));
}

bool AdvanceWatermark(const WatermarkAdvance& advance,
                      int64_t* watermark_generation, absl::Time* watermark) {
  if (advance.generation < *watermark_generation) return false;
  if (advance.generation == *watermark_generation &&
      advance.watermark <= *watermark) {
    return false;
  }
  *watermark_generation = advance.generation;
  *watermark = advance.watermark;
  return true;
}

absl::Status ValidateTransitions(absl::Span<const RunTransition> batch) {
  for (size_t i = 0; i < batch.size(); ++i) {
    const RunTransition& t = batch[i];
    if (t.run == 0)
      return Invalid(absl::StrCat("transitions[", i, "].run"), "is 0");
    if (t.to == RunState::kClaiming || t.from == RunState::kClaiming) {
      return Invalid(
          absl::StrCat("transitions[", i, "]"),
          "claiming is never stored (a claim creates a pending run)");
    }
    if (t.from == t.to) {
      return Invalid(absl::StrCat("transitions[", i, "]"),
                     absl::StrCat("from and to are both ", RunStateName(t.to)));
    }
    if (t.to == RunState::kRunning && t.attempt < 1) {
      return Invalid(absl::StrCat("transitions[", i, "].attempt"),
                     absl::StrCat(t.attempt, " is below 1 for a start"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateLimit(int limit) {
  if (limit >= 1) return absl::OkStatus();
  return Invalid("limit", absl::StrCat(limit, " is below 1"));
}

absl::Status ValidateRunIdCount(int64_t count) {
  if (count < 1) return Invalid("count", absl::StrCat(count, " is below 1"));
  if (count > (int64_t{1} << 40)) {
    return Invalid("count", absl::StrCat(count, " is above 2^40"));
  }
  return absl::OkStatus();
}

absl::Status ValidateIdempotencyRecord(const IdempotencyRecord& record) {
  if (record.key.empty()) return Invalid("idempotency key", "is empty");
  if (record.expires_at <= record.created_at) {
    return Invalid("idempotency expires_at", "is not after created_at");
  }
  return absl::OkStatus();
}

absl::StatusOr<JobPutPlan> PlanJobPut(const JobRecord* existing,
                                      const JobWrite& write) {
  const int64_t expected = write.expected_revision;
  const std::string name = JobKeyString(write.spec.key);
  if (existing == nullptr || existing->deleted) {
    if (!write.create_only && expected != kAnyRevision &&
        expected != kNoRevision) {
      return absl::AbortedError(absl::StrCat("job \"", name,
                                             "\" does not exist (expected "
                                             "revision ",
                                             expected, ")"));
    }
    return JobPutPlan{true, existing == nullptr ? 1 : existing->generation + 1,
                      write.watermark != absl::InfinitePast()};
  }
  if (write.create_only) {
    return absl::AbortedError(absl::StrCat("job \"", name,
                                           "\" already exists (revision ",
                                           existing->revision, ")"));
  }
  if (existing->spec == write.spec) {
    return JobPutPlan{false, existing->generation};
  }
  if (expected != kAnyRevision && expected != existing->revision) {
    return absl::AbortedError(absl::StrCat("job \"", name, "\" is at revision ",
                                           existing->revision,
                                           ", not the expected ", expected));
  }
  const bool bump = ScheduleChanged(existing->spec, write.spec);
  return JobPutPlan{true, existing->generation + (bump ? 1 : 0),
                    bump && write.watermark != absl::InfinitePast()};
}

void ApplyJobPut(const JobPutPlan& plan, const JobWrite& write,
                 JobRecord* job) {
  job->spec = write.spec;
  job->generation = plan.generation;
  job->deleted = false;
  if (plan.start_watermark) {
    job->watermark = write.watermark;
    job->watermark_generation = plan.generation;
  }
}

absl::StatusOr<bool> PlanJobDelete(const JobRecord* existing, const JobKey& key,
                                   int64_t expected_revision) {
  if (existing == nullptr) return JobNotFoundError(key);
  if (existing->deleted) return false;
  if (expected_revision != kAnyRevision &&
      expected_revision != existing->revision) {
    return absl::AbortedError(absl::StrCat(
        "job \"", JobKeyString(key), "\" is at revision ", existing->revision,
        ", not the expected ", expected_revision));
  }
  return true;
}

absl::StatusOr<bool> CheckTransition(RunState current, const RunTransition& t,
                                     bool in_history) {
  // History first: a stale re-send of running -> retrying (attempt 1) must
  // not apply again while attempt 2 runs, although the run is running.
  if (in_history) return false;
  if (current == t.from) return true;
  return TransitionConflictError(t, current);
}

absl::Status FencedError(const Fence& fence, int64_t current_token) {
  return absl::FailedPreconditionError(absl::StrCat(
      "fenced: token ", fence.token, " of lease \"", fence.lease,
      "\" is not current (current token: ", current_token,
      current_token == 0 ? ", none granted or released" : "", ")"));
}

absl::Status ClaimConflictError(const FireRef& fire, RunId claimed_by,
                                RunId asked) {
  return absl::AlreadyExistsError(
      absl::StrCat("fire ", FireRefString(fire), " is already claimed by run ",
                   claimed_by, " (this claim is for run ", asked, ")"));
}

absl::Status RunIdReusedError(RunId run, const FireRef& claimed,
                              const FireRef& asked) {
  return absl::AlreadyExistsError(
      absl::StrCat("run id ", run, " already belongs to fire ",
                   FireRefString(claimed), ", not ", FireRefString(asked)));
}

absl::Status TransitionConflictError(const RunTransition& t, RunState current) {
  return absl::AbortedError(
      absl::StrCat("run ", t.run, ": transition ", RunStateName(t.from), " -> ",
                   RunStateName(t.to), " (attempt ", t.attempt,
                   "), but the run is ", RunStateName(current)));
}

absl::Status JobNotFoundError(const JobKey& key) {
  return absl::NotFoundError(
      absl::StrCat("job \"", JobKeyString(key), "\" does not exist"));
}

absl::Status UnknownJobIdError(JobId job) {
  return absl::NotFoundError(absl::StrCat("job id ", job, " is unknown"));
}

absl::Status RunNotFoundError(RunId run) {
  return absl::NotFoundError(absl::StrCat("run ", run, " does not exist"));
}

}  // namespace chime::store
