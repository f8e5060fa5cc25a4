// One job mapping of a job file -> a validated JobSpec (docs/jobs.md lists
// the keys). Internal to src/config; job_file.h is the public entry point.
//
// Thread-safety: a pure function.
#ifndef CHIME_SRC_CONFIG_JOB_FIELDS_H_
#define CHIME_SRC_CONFIG_JOB_FIELDS_H_

#include "absl/status/statusor.h"
#include "chime/job.h"
#include "src/config/yaml_fields.h"

namespace chime::config::internal {

// Reads the mapping `job` (at `job.path`, e.g. "jobs[1]") into a JobSpec and
// checks it with chime::ValidateJobSpec. Every error is InvalidArgument
// "<line>:<column>: <path>: <message>", pointing at the offending value; a
// ValidateJobSpec message is re-addressed to the key the file wrote
// ("retry.max_attempts: 0 is below 1" -> "8:28: jobs[1].retry.max_attempts:
// 0 is below 1"), or to the nearest enclosing key when the field was left at
// its default.
absl::StatusOr<JobSpec> ReadJob(const Value& job);

}  // namespace chime::config::internal

#endif  // CHIME_SRC_CONFIG_JOB_FIELDS_H_
