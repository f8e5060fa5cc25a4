#include "tests/crash/crash_jobs.h"

#include "absl/strings/str_format.h"

namespace chime::crash {

JobSpec CrashJob(int index) {
  JobSpec spec;
  spec.key.id = absl::StrFormat("crash-%03d", index);
  // Both spellings of "every second": the seconds cron and a fixed interval.
  spec.trigger.expression = index % 4 == 3 ? "@every 1s" : "* * * * * *";
  const bool at_least_once = index % 2 == 1;
  spec.delivery =
      at_least_once ? Delivery::kAtLeastOnce : Delivery::kAtMostOnce;
  switch (index / 2 % 4) {
    case 0:
      spec.misfire.action = MisfireAction::kRunOnce;
      break;
    case 1:
      spec.misfire.action = MisfireAction::kSkip;
      spec.misfire.threshold = absl::Milliseconds(300);
      break;
    case 2:
      spec.misfire.action = MisfireAction::kRunOnce;
      spec.misfire.threshold = absl::Milliseconds(300);
      break;
    default:
      spec.misfire.action = MisfireAction::kRunAll;
      spec.misfire.threshold = absl::Milliseconds(300);
      spec.misfire.max_catchup = 2;
      break;
  }
  switch (index % 5) {
    case 0:
      spec.overlap.action = OverlapAction::kAllow;
      break;
    case 1:
      spec.overlap.action = OverlapAction::kBufferOne;
      break;
    default:
      spec.overlap.action = OverlapAction::kSkip;
      break;
  }
  if (at_least_once && index / 2 % 3 == 0) {
    spec.retry.max_attempts = 2;
    spec.retry.initial_backoff = absl::Milliseconds(100);
  }
  return spec;
}

}  // namespace chime::crash
