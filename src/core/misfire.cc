#include "src/core/misfire.h"

#include <algorithm>

namespace chime::core {

MissedRange CountRange(const FireSource& source, absl::Time first,
                       absl::Time last, MissReason reason) {
  MissedRange range{first, last, 0, false, reason};
  for (absl::Time t = first; t <= last; t = source.Next(t)) {
    if (++range.count >= kMaxMissedCount && t < last) {
      range.count_capped = true;
      break;
    }
  }
  return range;
}

DueFires DecideDueFires(const FireSource& source, absl::Time watermark,
                        absl::Time now, const MisfirePolicy& policy,
                        absl::Time horizon) {
  DueFires due;
  due.watermark = watermark;
  const absl::Time newest =
      source.Prev(std::max(now, horizon) + absl::Nanoseconds(1));
  if (newest == absl::InfinitePast() || newest <= watermark) return due;
  due.watermark = newest;

  int quota = 0;  // misfires that may still run
  MissReason policy_reason = MissReason::kMisfireSkip;
  switch (policy.action) {
    case MisfireAction::kSkip:
      break;
    case MisfireAction::kRunOnce:
      quota = 1;
      policy_reason = MissReason::kMisfireRunOnce;
      break;
    case MisfireAction::kRunAll:
      quota = policy.max_catchup;
      policy_reason = MissReason::kMisfireMaxCatchup;
      break;
  }

  // Walk back from the newest fire, collecting those that run; stop at the
  // first that does not: every older fire is missed too (they are only later).
  absl::Time t = newest;
  while (t > watermark && t != absl::InfinitePast()) {
    const absl::Duration late = now - t;
    if (late > policy.threshold) {
      if (late > policy.catchup_window || quota == 0) break;
      // run_once stands for the whole backlog with one run: a newer fire within
      // the threshold is already that run, so no misfire runs beside it.
      if (policy.action == MisfireAction::kRunOnce && !due.run.empty()) break;
      --quota;
    }
    due.run.push_back(t);
    t = source.Prev(t);
  }
  std::reverse(due.run.begin(), due.run.end());
  if (t <= watermark || t == absl::InfinitePast()) return due;

  // Fires in (watermark, t] are missed: those older than the window for that
  // reason, the rest by the policy.
  const absl::Time first = source.Next(watermark);
  const absl::Time window_start = now - policy.catchup_window;
  const absl::Time last_outside = std::min(t, source.Prev(window_start));
  if (last_outside >= first && last_outside != absl::InfinitePast()) {
    due.missed.push_back(
        CountRange(source, first, last_outside, MissReason::kCatchupWindow));
  }
  const absl::Time first_inside =
      last_outside >= first && last_outside != absl::InfinitePast()
          ? source.Next(last_outside)
          : first;
  if (first_inside <= t) {
    due.missed.push_back(CountRange(source, first_inside, t, policy_reason));
  }
  return due;
}

}  // namespace chime::core
