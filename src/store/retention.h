// Which finished runs a RetentionPolicy deletes: one function, so that every
// backend deletes the same runs (a SQL backend reads the candidates, calls it,
// and deletes the ids it returns).
//
// Order of the rules: runs not updated for max_age go first; then, per job,
// all but the newest keep_per_job (by scheduled time, then RunId); then the
// oldest (same order) until the total run bytes fit max_total_bytes. Only
// finished runs are candidates; unfinished runs still count toward the total.
//
// Thread-safety: pure function.
#ifndef CHIME_SRC_STORE_RETENTION_H_
#define CHIME_SRC_STORE_RETENTION_H_

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "chime/store_types.h"

namespace chime::store {

struct RetentionCandidate {
  RunId id = 0;
  JobId job = 0;
  absl::Time scheduled_time;
  absl::Time updated_at;
  int64_t bytes = 0;
};

// The ids of the runs to delete. `total_bytes` counts every run, finished or
// not.
std::vector<RunId> SelectRunsToDelete(std::vector<RetentionCandidate> finished,
                                      int64_t total_bytes,
                                      const RetentionPolicy& policy,
                                      absl::Time now);

}  // namespace chime::store

#endif  // CHIME_SRC_STORE_RETENTION_H_
