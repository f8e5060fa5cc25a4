// ValidateJobSpec (chime/job.h) with the trigger's schedule checked by the
// caller, so that a caller that parses it anyway (FireSource::Validate)
// parses it once.
#ifndef CHIME_SRC_CORE_JOB_VALIDATION_H_
#define CHIME_SRC_CORE_JOB_VALIDATION_H_

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "chime/job.h"

namespace chime::core {

// The checks of ValidateJobSpec, in its order; for a schedule trigger,
// `check_schedule` stands for parsing the expression and returns its error
// as ValidateJobSpec would ("trigger.schedule: ...").
absl::Status ValidateJobSpec(const JobSpec& spec,
                             absl::FunctionRef<absl::Status()> check_schedule);

}  // namespace chime::core

#endif  // CHIME_SRC_CORE_JOB_VALIDATION_H_
