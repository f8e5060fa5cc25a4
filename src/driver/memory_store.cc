#include "src/driver/memory_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace chime::driver {
namespace {

// Identifies a missed record, so that a batch sent again does not record it
// twice.
std::string MissedKey(const JobKey& job, int64_t generation,
                      const core::MissedRange& range) {
  return absl::StrCat(FireKey{job, generation, range.first}.ToString(), "/",
                      core::MissReasonName(range.reason));
}

bool Final(core::RunState s) {
  return s == core::RunState::kSucceeded || s == core::RunState::kFailed ||
         s == core::RunState::kCancelled;
}

}  // namespace

absl::Status MemoryStore::Persist(const core::PersistAction& batch) {
  absl::MutexLock lock(&mu_);
  if (batch.token < highest_token_) {
    return absl::FailedPreconditionError(
        absl::StrCat("fenced: token ", batch.token,
                     " is below the highest token seen, ", highest_token_));
  }
  // Check every claim before writing anything: the batch is all or nothing.
  for (const core::PersistAction::Claim& claim : batch.claims) {
    auto it = claims_.find(claim.fire);
    if (it != claims_.end() && it->second.run != claim.run) {
      return absl::AlreadyExistsError(
          absl::StrCat("fire ", claim.fire.ToString(),
                       " is already claimed by run ", it->second.run));
    }
  }
  highest_token_ = batch.token;
  for (const core::PersistAction::Claim& claim : batch.claims) {
    claims_.try_emplace(claim.fire, Claim{claim.run, batch.token});
    runs_[claim.run].fire = claim.fire;
  }
  for (const core::PersistAction::Missed& m : batch.missed) {
    if (!missed_keys_.insert(MissedKey(m.job, m.generation, m.range)).second)
      continue;
    missed_.push_back(MissedRecord{m.job, m.generation, m.range});
  }
  for (const core::PersistAction::Watermark& w : batch.watermarks) {
    // Forward only within a generation; a newer generation starts its own.
    auto [it, inserted] =
        watermarks_.try_emplace(w.job, w.generation, w.watermark);
    auto& [generation, stored] = it->second;
    if (w.generation > generation) {
      generation = w.generation;
      stored = w.watermark;
    } else if (w.generation == generation) {
      stored = std::max(stored, w.watermark);
    }
  }
  ForgetOldRunsLocked();
  return absl::OkStatus();
}

absl::Status MemoryStore::RecordTransition(const core::TransitionAction& t,
                                           absl::Time at) {
  absl::MutexLock lock(&mu_);
  RunRecord& record = runs_[t.run];
  const core::RunState last = record.history.empty() ? core::RunState::kClaiming
                                                     : record.history.back().to;
  if (last != t.from) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run ", t.run, ": transition from ", core::RunStateName(t.from), " to ",
        core::RunStateName(t.to), ", but its recorded state is ",
        core::RunStateName(last)));
  }
  record.history.push_back(HistoryEntry{t.from, t.to, t.attempt, t.detail, at});
  if (Final(t.to)) {
    finished_.push_back(t.run);
    ForgetOldRunsLocked();
  }
  return absl::OkStatus();
}

void MemoryStore::ForgetOldRunsLocked() {
  while (finished_.size() > options_.max_finished_runs) {
    auto it = runs_.find(finished_.front());
    finished_.pop_front();
    if (it == runs_.end()) continue;
    if (it->second.fire.has_value()) claims_.erase(*it->second.fire);
    runs_.erase(it);
  }
  while (missed_.size() > options_.max_finished_runs) {
    const MissedRecord& oldest = missed_.front();
    missed_keys_.erase(MissedKey(oldest.job, oldest.generation, oldest.range));
    missed_.pop_front();
  }
}

std::optional<MemoryStore::Claim> MemoryStore::GetClaim(
    const FireKey& fire) const {
  absl::MutexLock lock(&mu_);
  auto it = claims_.find(fire);
  if (it == claims_.end()) return std::nullopt;
  return it->second;
}

std::vector<MemoryStore::HistoryEntry> MemoryStore::History(
    core::RunId run) const {
  absl::MutexLock lock(&mu_);
  auto it = runs_.find(run);
  if (it == runs_.end()) return {};
  return std::vector<HistoryEntry>(it->second.history.begin(),
                                   it->second.history.end());
}

std::vector<MemoryStore::MissedRecord> MemoryStore::Missed() const {
  absl::MutexLock lock(&mu_);
  return std::vector<MissedRecord>(missed_.begin(), missed_.end());
}

absl::Time MemoryStore::Watermark(const JobKey& job) const {
  absl::MutexLock lock(&mu_);
  auto it = watermarks_.find(job);
  return it == watermarks_.end() ? absl::InfinitePast() : it->second.second;
}

int64_t MemoryStore::HighestToken() const {
  absl::MutexLock lock(&mu_);
  return highest_token_;
}

}  // namespace chime::driver
