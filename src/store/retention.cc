#include "src/store/retention.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace chime::store {
namespace {

// Newest first: scheduled time, then RunId, both descending.
bool Newer(const RetentionCandidate& a, const RetentionCandidate& b) {
  if (a.scheduled_time != b.scheduled_time) {
    return a.scheduled_time > b.scheduled_time;
  }
  return a.id > b.id;
}

}  // namespace

std::vector<RunId> SelectRunsToDelete(std::vector<RetentionCandidate> finished,
                                      int64_t total_bytes,
                                      const RetentionPolicy& policy,
                                      absl::Time now) {
  std::vector<RunId> out;
  std::vector<RetentionCandidate> kept;
  kept.reserve(finished.size());
  const absl::Time cutoff = policy.max_age == absl::InfiniteDuration()
                                ? absl::InfinitePast()
                                : now - policy.max_age;
  for (const RetentionCandidate& c : finished) {
    if (c.updated_at < cutoff) {
      out.push_back(c.id);
      total_bytes -= c.bytes;
    } else {
      kept.push_back(c);
    }
  }
  std::sort(kept.begin(), kept.end(), Newer);
  if (policy.keep_per_job > 0) {
    absl::flat_hash_map<JobId, int64_t> seen;
    std::vector<RetentionCandidate> still;
    still.reserve(kept.size());
    for (const RetentionCandidate& c : kept) {
      if (++seen[c.job] > policy.keep_per_job) {
        out.push_back(c.id);
        total_bytes -= c.bytes;
      } else {
        still.push_back(c);
      }
    }
    kept = std::move(still);
  }
  if (policy.max_total_bytes > 0) {
    // `kept` is newest first: delete from the back.
    while (total_bytes > policy.max_total_bytes && !kept.empty()) {
      out.push_back(kept.back().id);
      total_bytes -= kept.back().bytes;
      kept.pop_back();
    }
  }
  return out;
}

}  // namespace chime::store
