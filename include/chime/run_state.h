// The states of a run and the reasons a fire did not run: shared by the core
// (src/core/plan.h, src/core/misfire.h), the stores and the API, which all
// use these names ("pending", "misfire_skip", ...).
#ifndef CHIME_INCLUDE_CHIME_RUN_STATE_H_
#define CHIME_INCLUDE_CHIME_RUN_STATE_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace chime {

enum class RunState : uint8_t {
  kClaiming,   // not durable yet; never stored
  kPending,    // claimed, waiting for an execution slot (a claim's state)
  kRunning,    // an attempt is running
  kRetrying,   // an attempt ended; the next waits for its backoff
  kSucceeded,  // final
  kFailed,     // final
  kCancelled,  // final
  kLost,       // the scheduler that ran it died; recovery decides what follows
};

// Why a fire did not run.
enum class MissReason : uint8_t {
  kMisfireSkip,        // late beyond the threshold, policy skip
  kMisfireRunOnce,     // late beyond the threshold, a newer misfire ran instead
  kMisfireMaxCatchup,  // late beyond the threshold, more than max_catchup
                       // misfires
  kCatchupWindow,      // older than the catch-up window
  kPaused,             // due while the job was paused
  kOverlap,  // skipped (overlap skip): the previous run was still going, or a
             // newer fire that came due at the same moment ran instead
  kBufferFull,  // skipped: the overlap buffer was full
  kReplaced,    // superseded (overlap replace) by a newer fire that came due at
                // the same moment
  kJobRemoved,  // buffered or pending when the job was removed or its schedule
                // changed
  kFenced,  // this scheduler lost ownership before the fire could be claimed
  // (Values are stored as numbers: new reasons go at the end.)
  // Claimed, but not started within the job's misfire threshold (policy skip)
  // because no execution slot was free: the global limit on concurrent runs
  // or its namespace's quota held it back. Its run ends cancelled.
  kQuota,
  // The first fire after the job's end date: the job has ended. One record,
  // when that fire would have been due; later fires are not recorded.
  kEnded,
};
// The last reason, for readers of stored values.
inline constexpr MissReason kLastMissReason = MissReason::kEnded;

inline absl::string_view RunStateName(RunState s) {
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

// Succeeded, failed or cancelled: the run never changes again, and retention
// may delete it. (Lost is not final: at-least-once delivery starts it again.)
inline bool IsFinal(RunState s) {
  return s == RunState::kSucceeded || s == RunState::kFailed ||
         s == RunState::kCancelled;
}

inline absl::string_view MissReasonName(MissReason r) {
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
    case MissReason::kQuota:
      return "quota";
    case MissReason::kEnded:
      return "ended";
  }
  return "unknown";
}

}  // namespace chime

#endif  // CHIME_INCLUDE_CHIME_RUN_STATE_H_
