// MemoryStore: run transitions, history, retention, idempotency keys.
#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/store/memory_store.h"
#include "src/store/retention.h"
#include "src/store/store_util.h"

namespace chime::store {
namespace {

// The key of job `id` among `jobs` (tombstones included: a deleted job's runs
// stay, and so does its key).
JobKey KeyOf(const std::map<JobId, JobRecord>& jobs, JobId id) {
  auto it = jobs.find(id);
  return it == jobs.end() ? JobKey{} : it->second.spec.key;
}

}  // namespace

// --- Runs ---

absl::Status MemoryStore::TransitionRuns(const Fence& fence,
                                         absl::Span<const RunTransition> batch,
                                         MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  RETURN_IF_ERROR(ValidateTransitions(batch));
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckFenceLocked(fence));
  // Check in order against the states the batch itself produces.
  absl::flat_hash_map<RunId, RunState> state;
  std::vector<bool> apply(batch.size(), false);
  for (size_t i = 0; i < batch.size(); ++i) {
    const RunTransition& t = batch[i];
    auto run = runs_.find(t.run);
    if (run == runs_.end()) {
      return RunNotFoundError(t.run);
    }
    auto [s, unused] = state.try_emplace(t.run, run->second.detail.run.state);
    bool in_history = false;
    for (const TransitionRecord& h : run->second.detail.transitions) {
      if (h.from == t.from && h.to == t.to && h.attempt == t.attempt) {
        in_history = true;
        break;
      }
    }
    ASSIGN_OR_RETURN(apply[i], CheckTransition(s->second, t, in_history));
    if (apply[i]) s->second = t.to;
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!apply[i]) continue;
    const RunTransition& t = batch[i];
    Run& run = runs_.at(t.run);
    RunDetail& d = run.detail;
    size_t kept_output = 0;
    if (t.to == RunState::kRunning) {
      // Attempt numbers are unique per run: starting one again replaces it.
      AttemptRecord started{t.attempt, fence.token, t.at};
      auto same = std::find_if(
          d.attempts.begin(), d.attempts.end(),
          [&](const AttemptRecord& a) { return a.number == t.attempt; });
      if (same != d.attempts.end()) {
        *same = std::move(started);
      } else {
        d.attempts.push_back(std::move(started));
        std::sort(d.attempts.begin(), d.attempts.end(),
                  [](const AttemptRecord& a, const AttemptRecord& b) {
                    return a.number < b.number;
                  });
      }
    }
    if (t.from == RunState::kRunning) {
      for (auto a = d.attempts.rbegin(); a != d.attempts.rend(); ++a) {
        if (a->number != t.attempt) continue;
        a->finished_at = t.at;
        a->outcome = t.to;
        a->exit_code = t.exit_code;
        a->detail = t.detail;
        a->output = t.output;
        a->output_truncated =
            TruncateOutput(&a->output, options_.max_output_bytes);
        kept_output = a->output.size();
        break;
      }
    }
    d.transitions.push_back(
        TransitionRecord{t.from, t.to, t.attempt, fence.token, t.at, t.detail});
    d.run.state = t.to;
    d.run.attempt = std::max(d.run.attempt, t.attempt);
    d.run.token = fence.token;
    d.run.updated_at = t.at;
    d.run.detail = t.detail;
    const int64_t bytes = TransitionBytes(t, kept_output);
    run.bytes += bytes;
    run_bytes_ += bytes;
    if (IsFinal(t.to) && options_.max_finished_runs != 0)
      finished_.push_back(t.run);
  }
  while (finished_.size() > options_.max_finished_runs &&
         options_.max_finished_runs != 0) {
    DeleteRunLocked(finished_.front());
    finished_.pop_front();
  }
  return absl::OkStatus();
}

absl::StatusOr<RunDetail> MemoryStore::GetRun(RunId run, MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  absl::MutexLock lock(&mu_);
  auto it = runs_.find(run);
  if (it == runs_.end()) {
    return RunNotFoundError(run);
  }
  RunDetail detail = it->second.detail;
  detail.run.job_key = KeyOf(jobs_, detail.run.fire.job);
  return detail;
}

absl::StatusOr<RunPage> MemoryStore::ListRuns(const RunQuery& query,
                                              MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  RETURN_IF_ERROR(ValidateLimit(query.limit));
  absl::MutexLock lock(&mu_);
  auto before_cursor = [&](const RunRecord& r) {
    if (!query.after) return true;
    const RunCursor& c = *query.after;
    return r.fire.scheduled_time < c.scheduled_time ||
           (r.fire.scheduled_time == c.scheduled_time && r.id < c.run);
  };
  std::vector<const RunRecord*> match;
  for (const auto& [id, run] : runs_) {
    const RunRecord& r = run.detail.run;
    if (query.job && r.fire.job != *query.job) continue;
    if (query.state && r.state != *query.state) continue;
    if (r.fire.scheduled_time < query.from || r.fire.scheduled_time >= query.to)
      continue;
    if (!before_cursor(r)) continue;
    match.push_back(&r);
  }
  std::sort(match.begin(), match.end(),
            [](const RunRecord* a, const RunRecord* b) {
              if (a->fire.scheduled_time != b->fire.scheduled_time) {
                return a->fire.scheduled_time > b->fire.scheduled_time;
              }
              return a->id > b->id;
            });
  RunPage page;
  for (const RunRecord* r : match) {
    if (static_cast<int>(page.runs.size()) == query.limit) {
      const RunRecord& last = page.runs.back();
      page.next = RunCursor{last.fire.scheduled_time, last.id};
      break;
    }
    page.runs.push_back(*r);
    page.runs.back().job_key = KeyOf(jobs_, r->fire.job);
  }
  return page;
}

void MemoryStore::DeleteRunLocked(RunId id) {
  auto it = runs_.find(id);
  if (it == runs_.end()) return;
  fires_.erase(it->second.detail.run.fire);
  run_bytes_ -= it->second.bytes;
  runs_.erase(it);
}

absl::StatusOr<RetentionResult> MemoryStore::ApplyRetention(
    const RetentionPolicy& policy, absl::Time now, MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  absl::MutexLock lock(&mu_);
  std::vector<RetentionCandidate> finished;
  for (const auto& [id, run] : runs_) {
    const RunRecord& r = run.detail.run;
    if (!IsFinal(r.state)) continue;
    finished.push_back(RetentionCandidate{id, r.fire.job, r.fire.scheduled_time,
                                          r.updated_at, run.bytes});
  }
  RetentionResult result;
  for (RunId id :
       SelectRunsToDelete(std::move(finished), run_bytes_, policy, now)) {
    DeleteRunLocked(id);
    ++result.runs_deleted;
  }
  if (policy.max_age != absl::InfiniteDuration()) {
    const absl::Time cutoff = now - policy.max_age;
    for (auto it = missed_.begin(); it != missed_.end();) {
      if (it->second.last < cutoff) {
        it = missed_.erase(it);
        ++result.missed_deleted;
      } else {
        ++it;
      }
    }
  }
  absl::erase_if(idempotency_, [&](const auto& entry) {
    if (entry.second.expires_at > now) return false;
    ++result.idempotency_keys_deleted;
    return true;
  });
  return result;
}

// --- Idempotency keys ---

absl::StatusOr<IdempotencyOutcome> MemoryStore::CheckIdempotencyKey(
    const IdempotencyRecord& record, MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  RETURN_IF_ERROR(ValidateIdempotencyRecord(record));
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = idempotency_.try_emplace(record.key, record);
  if (!inserted && it->second.expires_at > record.created_at) {
    return IdempotencyOutcome{false, it->second};
  }
  it->second = record;
  return IdempotencyOutcome{true, record};
}

absl::StatusOr<StoreInfo> MemoryStore::GetInfo(MonoTime deadline) {
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  absl::MutexLock lock(&mu_);
  StoreInfo info;
  info.revision = revision_;
  info.max_run_id = max_run_id_;
  for (const auto& [id, job] : jobs_) info.jobs += job.deleted ? 0 : 1;
  info.runs = static_cast<int64_t>(runs_.size());
  info.run_bytes = run_bytes_;
  return info;
}

absl::StatusOr<RunId> MemoryStore::ReserveRunIds(int64_t count,
                                                 MonoTime deadline) {
  RETURN_IF_ERROR(ValidateRunIdCount(count));
  RETURN_IF_ERROR(CheckDeadline(clock_, deadline));
  absl::MutexLock lock(&mu_);
  const RunId first = max_run_id_ + 1;
  max_run_id_ += static_cast<RunId>(count);
  return first;
}

}  // namespace chime::store
