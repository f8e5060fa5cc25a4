// The misfire policy: which of a job's due fires run, and which are recorded
// missed.
//
// Every trigger type goes through this one function, driven by the job's
// watermark (the newest scheduled time whose fate is decided). When the
// scheduler looks at a job at wall time `now`, the undecided fires are those in
// (watermark, now]. A fire `late` = now - scheduled:
//   - late <= threshold: it runs (it is merely late: overload, a slow wake-up);
//   - late > catchup_window: it is recorded missed (kCatchupWindow), whatever
//   the action;
//   - otherwise it is a misfire, and the action decides: kSkip records it
//   missed; kRunOnce runs
//     the newest misfire and records the others missed -- unless a newer fire
//     within the threshold runs, which then stands for the backlog, and every
//     misfire is recorded missed; kRunAll runs the newest `max_catchup`
//     misfires and records the others missed.
// Missed fires are reported as ranges with a count, so a year of downtime of an
// every-second job costs a few records, not 31 million.
//
// Example: "*/10 * * * *", threshold 1m, window 24h, run_once, watermark 09:00,
// now 09:35:20 (the scheduler was down): undecided fires 09:10, 09:20, 09:30;
// all are more than 1m late; the newest, 09:30, runs; 09:10-09:20 (2 fires) are
// missed with reason kMisfireRunOnce; the watermark becomes 09:30. Had the
// scheduler come back at 09:30:20 instead, 09:30 would be only 20s late: it
// runs, and 09:10-09:20 are missed (kMisfireRunOnce) -- one run, not two.
//
// Thread-safety: pure function.
#ifndef CHIME_SRC_CORE_MISFIRE_H_
#define CHIME_SRC_CORE_MISFIRE_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "chime/job.h"
#include "chime/run_state.h"
#include "src/core/fire_source.h"

namespace chime::core {

// Why a fire did not run. Every one is recorded and counted.
// The reasons are the public ones (chime/run_state.h).
using ::chime::MissReason;
using ::chime::MissReasonName;

// Fires with scheduled times in [first, last] that did not run, all for one
// reason.
struct MissedRange {
  absl::Time first;
  absl::Time last;
  int64_t count = 0;          // exact, unless count_capped
  bool count_capped = false;  // more than kMaxMissedCount: count is that cap
  MissReason reason = MissReason::kMisfireSkip;
  friend bool operator==(const MissedRange&, const MissedRange&) = default;
};
inline constexpr int64_t kMaxMissedCount = 100000;

struct DueFires {
  std::vector<absl::Time> run;      // ascending scheduled times
  std::vector<MissedRange> missed;  // ascending
  absl::Time watermark;  // the newest fire <= now, or the old watermark
};

// Decides the fate of every fire in (watermark, horizon], judging lateness at
// `now` (fires after `now`, decided ahead of their time, are not late).
// Costs O(fires that run + log) calls into `source` plus at most
// kMaxMissedCount to count a missed range. `watermark` in the result is the
// newest fire <= horizon, or the old watermark.
DueFires DecideDueFires(const FireSource& source, absl::Time watermark,
                        absl::Time now, const MisfirePolicy& policy,
                        absl::Time horizon);
// The same with horizon = now.
inline DueFires DecideDueFires(const FireSource& source, absl::Time watermark,
                               absl::Time now, const MisfirePolicy& policy) {
  return DecideDueFires(source, watermark, now, policy, now);
}

// Counts the fires in [first, last] (capped at kMaxMissedCount) as one range.
MissedRange CountRange(const FireSource& source, absl::Time first,
                       absl::Time last, MissReason reason);

}  // namespace chime::core

#endif  // CHIME_SRC_CORE_MISFIRE_H_
