// MemoryStore: the in-memory reference store behind the scheduler driver.
//
// It keeps what the Plan asks to persist -- claims, missed and skipped records,
// watermarks -- and the run history, with the two rules every store must follow
// (ARCHITECTURE.md, section 5):
//   - a claim is create-if-absent keyed by its FireKey : a second
//     claim of the same fire by a different run is refused, whoever asks; the
//     same claim sent again (a re-sent batch) is accepted and changes nothing,
//     and so is a missed record sent again;
//   - a batch is fenced by its token: a batch whose token is lower than the
//     highest token seen is refused with FailedPrecondition.
// A batch is all or nothing: when any part is refused, nothing of it is
// written. Run transitions are compare-and-set on the run's last recorded
// state.
//
// Nothing survives the process: this store is the default for the library and
// the reference for the durable Store interface (next issue), which will
// replace it behind the driver.
//
// Memory: at most `max_finished_runs` finished runs are remembered (claim and
// history); older ones are forgotten, oldest first. After that a second claim
// of a forgotten fire is no longer refused -- the Plan never makes one, as
// watermarks only move forward -- and missed records are kept up to the same
// bound.
//
// Thread-safety: every method may be called from any thread.
#ifndef CHIME_SRC_DRIVER_MEMORY_STORE_H_
#define CHIME_SRC_DRIVER_MEMORY_STORE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "chime/job.h"
#include "src/core/plan.h"

namespace chime::driver {

class MemoryStore {
 public:
  struct Options {
    size_t max_finished_runs = 10000;
  };

  // One recorded run state change.
  struct HistoryEntry {
    core::RunState from = core::RunState::kClaiming;
    core::RunState to = core::RunState::kClaiming;
    int attempt = 0;
    std::string detail;
    absl::Time at;
  };

  struct Claim {
    core::RunId run = 0;
    int64_t token = 0;
  };

  struct MissedRecord {
    JobKey job;
    int64_t generation = 0;
    core::MissedRange range;
  };

  MemoryStore() : MemoryStore(Options{}) {}
  explicit MemoryStore(Options options) : options_(options) {}

  // Writes one batch atomically. OK: every claim, record and watermark is
  // stored (watermarks only move forward). FailedPrecondition: fenced
  // (batch.token is below the highest token seen). AlreadyExists: a fire in the
  // batch is already claimed by another run (the message names it). On any
  // error nothing is written.
  absl::Status Persist(const core::PersistAction& batch);

  // Appends a run state change at `at`. FailedPrecondition when `t.from` is not
  // the run's last recorded state (claiming for a run with no history); nothing
  // is recorded then.
  absl::Status RecordTransition(const core::TransitionAction& t, absl::Time at);

  // Inspection (tests, API).
  std::optional<Claim> GetClaim(const FireKey& fire) const;
  std::vector<HistoryEntry> History(core::RunId run) const;
  std::vector<MissedRecord> Missed() const;
  // InfinitePast if none was written.
  absl::Time Watermark(const JobKey& job) const;
  int64_t HighestToken() const;

 private:
  struct RunRecord {
    // Unset if the run was never claimed (cancelled while claiming).
    std::optional<FireKey> fire;
    // A run has three or four transitions when all goes well.
    absl::InlinedVector<HistoryEntry, 4> history;
  };

  void ForgetOldRunsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  int64_t highest_token_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<FireKey, Claim> claims_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<core::RunId, RunRecord> runs_ ABSL_GUARDED_BY(mu_);
  std::deque<core::RunId> finished_ ABSL_GUARDED_BY(mu_);  // oldest first
  std::deque<MissedRecord> missed_ ABSL_GUARDED_BY(mu_);   // oldest first
  absl::flat_hash_set<std::string> missed_keys_
      ABSL_GUARDED_BY(mu_);  // of missed_, to dedupe
  // Each job's newest generation and its watermark.
  absl::flat_hash_map<JobKey, std::pair<int64_t, absl::Time>> watermarks_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace chime::driver

#endif  // CHIME_SRC_DRIVER_MEMORY_STORE_H_
