// Job specs for tests: the smallest spec with a given trigger.
#ifndef CHIME_TESTING_JOB_SPECS_H_
#define CHIME_TESTING_JOB_SPECS_H_

#include <string>
#include <utility>

#include "chime/job.h"

namespace chime::testing {

// Job `id` in the default namespace on the cron `expression`, every other
// field at its default.
inline JobSpec CronJob(std::string id, std::string expression) {
  JobSpec spec;
  spec.key.id = std::move(id);
  spec.trigger.expression = std::move(expression);
  return spec;
}

}  // namespace chime::testing

#endif  // CHIME_TESTING_JOB_SPECS_H_
